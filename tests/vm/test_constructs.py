"""Every construct run on the VM and compared with the same logic in plain Python."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from ponder.exceptions import VMError
from ponder.vm import (
    BREAK,
    CALL,
    CONTINUE,
    DO,
    IF,
    NATIVE_DO,
    NATIVE_IF,
    NATIVE_WHILE,
    NOP,
    RETURN,
    SUB,
    TRY,
    WHILE,
    Finished,
    Interpreter,
    NodeContext,
    compile_program,
    node,
)


class State(BaseModel):
    i: int = 0
    j: int = 0
    x: int = 0
    trace: list[str] = []


def rec(label: str) -> Any:
    """A node appending ``label`` (with the loop counters) to the trace."""

    def record(ctx: NodeContext) -> None:
        ctx.state.trace.append(label)

    return node(record, name=label)


def incr(field: str) -> Any:
    def bump(ctx: NodeContext) -> None:
        setattr(ctx.state, field, getattr(ctx.state, field) + 1)
        ctx.state.trace.append(f"{field}={getattr(ctx.state, field)}")

    return node(bump, name=f"incr_{field}")


def test_(field: str, op: str, value: int) -> Any:
    checks = {"<": int.__lt__, "==": int.__eq__, ">": int.__gt__}

    def check(ctx: NodeContext) -> bool:
        return bool(checks[op](getattr(ctx.state, field), value))

    return node(check, name=f"{field}{op}{value}")


test_.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def reset(field: str) -> Any:
    def zero(ctx: NodeContext) -> None:
        setattr(ctx.state, field, 0)

    return node(zero, name=f"reset_{field}")


async def run(program_block: Any, state: State | None = None, **kw: Any) -> tuple[Any, list[str]]:
    state = state or State()
    outcome = await Interpreter(compile_program(program_block, **kw), state).run()
    assert isinstance(outcome, Finished)
    return outcome.value, state.trace


async def test_sequence_runs_in_order() -> None:
    assert await run(rec("a") >> rec("b") >> [rec("c"), rec("d")]) == (None, ["a", "b", "c", "d"])


@pytest.mark.parametrize("x", range(4))
async def test_if_elif_else(x: int) -> None:
    def python() -> list[str]:
        trace = []
        if x == 0:
            trace += ["zero", "again"]
        elif x == 1:
            trace.append("one")
        elif x == 2:
            trace.append("two")
        else:
            trace.append("many")
        return trace

    program = (
        IF(test_("x", "==", 0), rec("zero") >> rec("again"))
        .ELIF(test_("x", "==", 1), rec("one"))
        .ELIF(test_("x", "==", 2), rec("two"))
        .ELSE(rec("many"))
    )
    assert (await run(program, State(x=x)))[1] == python()


@pytest.mark.parametrize("x", range(2))
async def test_if_without_else_and_native_alias(x: int) -> None:
    assert NATIVE_IF is IF and NATIVE_WHILE is WHILE and NATIVE_DO is DO
    _, trace = await run(NATIVE_IF(test_("x", "==", 0), rec("yes")) >> rec("end"), State(x=x))
    assert trace == (["yes", "end"] if x == 0 else ["end"])


async def test_while_with_break_and_continue() -> None:
    def python() -> list[str]:
        trace, i = [], 0
        while i < 10:
            i += 1
            trace.append(f"i={i}")
            if i == 3:
                continue
            if i == 7:
                break
            trace.append("body")
        return trace

    program = WHILE(test_("i", "<", 10)).ACTION(
        incr("i")
        >> IF(test_("i", "==", 3), CONTINUE)
        >> IF(test_("i", "==", 7), BREAK)
        >> rec("body")
    )
    assert (await run(program))[1] == python()


async def test_do_while_runs_at_least_once_and_continue_goes_to_the_test() -> None:
    def python(start: int) -> list[str]:
        trace, i = [], start
        while True:
            i += 1
            trace.append(f"i={i}")
            if i != 2:
                trace.append("body")
            if not i < 4:
                break
        return trace

    for start in (0, 10):
        program = DO(incr("i") >> IF(test_("i", "==", 2), CONTINUE) >> rec("body")).WHILE(
            test_("i", "<", 4)
        )
        assert (await run(program, State(i=start)))[1] == python(start)


async def test_nested_loops_with_break_and_continue_inside_try_finally() -> None:
    def python() -> list[str]:
        trace: list[str] = []
        i = 0
        while i < 3:
            i += 1
            trace.append(f"i={i}")
            j = 0
            while j < 5:
                j += 1
                trace.append(f"j={j}")
                try:
                    try:
                        if j == 2:
                            continue
                        if j == i + 2:
                            break
                        trace.append("work")
                    finally:
                        trace.append("inner-finally")
                finally:
                    trace.append("outer-finally")
            trace.append("after-inner")
        return trace

    inner = WHILE(test_("j", "<", 5)).ACTION(
        incr("j")
        >> TRY(
            TRY(
                IF(test_("j", "==", 2), CONTINUE)
                >> IF(node(lambda ctx: ctx.state.j == ctx.state.i + 2, name="j==i+2"), BREAK)
                >> rec("work")
            ).FINALLY(rec("inner-finally"))
        ).FINALLY(rec("outer-finally"))
    )
    program = WHILE(test_("i", "<", 3)).ACTION(
        incr("i") >> reset("j") >> inner >> rec("after-inner")
    )
    assert (await run(program))[1] == python()


class Boom(Exception):
    pass


class Other(Exception):
    pass


def raiser(exc: type[Exception], label: str) -> Any:
    def fail(ctx: NodeContext) -> None:
        ctx.state.trace.append(label)
        raise exc(label)

    return node(fail, name=label)


def seen(label: str) -> Any:
    def show(ctx: NodeContext) -> None:
        exc = ctx.exception
        ctx.state.trace.append(f"{label}:{type(exc).__name__}:{exc}")

    return node(show, name=label)


def reraise(ctx: NodeContext) -> None:
    assert ctx.exception is not None
    raise ctx.exception


async def test_try_except_else_finally_all_paths() -> None:
    def python(fail: bool) -> list[str]:
        trace = []
        try:
            trace.append("body")
            if fail:
                trace.append("boom")
                raise Boom("boom")
        except Other:
            trace.append("other")
        except Boom as exc:
            trace.append(f"handler:Boom:{exc}")
        else:
            trace.append("else")
        finally:
            trace.append("finally")
        return trace

    for fail in (False, True):
        body = rec("body") >> IF(test_("x", "==", 1), raiser(Boom, "boom"))
        program = (
            TRY(body)
            .EXCEPT(Other, rec("other"))
            .EXCEPT(Boom, seen("handler"))
            .ELSE(rec("else"))
            .FINALLY(rec("finally"))
        )
        assert (await run(program, State(x=int(fail))))[1] == python(fail)


async def test_reraise_from_a_handler_reaches_the_outer_handler() -> None:
    def python() -> list[str]:
        trace = []
        try:
            try:
                trace.append("boom")
                raise Boom("boom")
            except Boom as exc:
                trace.append(f"inner:Boom:{exc}")
                raise
            finally:
                trace.append("finally")
        except Exception as exc:
            trace.append(f"outer:{type(exc).__name__}:{exc}")
        return trace

    program = TRY(
        TRY(raiser(Boom, "boom"))
        .EXCEPT(Boom, seen("inner") >> node(reraise, name="reraise"))
        .FINALLY(rec("finally"))
    ).EXCEPT(Exception, seen("outer"))
    assert (await run(program))[1] == python()


async def test_exception_in_finally_replaces_the_pending_one() -> None:
    def python() -> list[str]:
        trace = []
        try:
            try:
                trace.append("boom")
                raise Boom("boom")
            finally:
                trace.append("other")
                raise Other("other")
        except Boom:
            trace.append("wrong")
        except Other as exc:
            trace.append(f"outer:Other:{exc}")
            trace.append(f"context:{type(exc.__context__).__name__}")
        return trace

    def context(ctx: NodeContext) -> None:
        assert ctx.exception is not None
        ctx.state.trace.append(f"context:{type(ctx.exception.__context__).__name__}")

    program = (
        TRY(TRY(raiser(Boom, "boom")).FINALLY(raiser(Other, "other")))
        .EXCEPT(Boom, rec("wrong"))
        .EXCEPT(Other, seen("outer") >> node(context, name="context"))
    )
    assert (await run(program))[1] == python()


async def test_unmatched_exception_propagates_after_finally() -> None:
    state = State()
    program = compile_program(
        TRY(TRY(raiser(Boom, "boom")).EXCEPT(Other, rec("other")).FINALLY(rec("finally"))).FINALLY(
            rec("outer-finally")
        )
        >> rec("never")
    )
    with pytest.raises(VMError) as info:
        await Interpreter(program, state).run()
    assert isinstance(info.value.__cause__, Boom)
    assert info.value.node == "boom"
    assert state.trace == ["boom", "finally", "outer-finally"]


async def test_handler_exception_leaves_except_and_runs_finally() -> None:
    def python() -> list[str]:
        trace = []
        try:
            try:
                trace.append("boom")
                raise Boom("boom")
            except Boom:
                trace.append("other")
                raise Other("other") from None
            finally:
                trace.append("finally")
        except Other as exc:
            trace.append(f"outer:Other:{exc}")
        return trace

    program = TRY(
        TRY(raiser(Boom, "boom")).EXCEPT(Boom, raiser(Other, "other")).FINALLY(rec("finally"))
    ).EXCEPT(Other, seen("outer"))
    assert (await run(program))[1] == python()


async def test_return_inside_try_runs_finally_and_keeps_the_value() -> None:
    def python() -> tuple[Any, list[str]]:
        trace = []

        def body() -> Any:
            try:
                trace.append("body")
                return 42
            finally:
                trace.append("finally")

        return body(), trace

    program = TRY(rec("body") >> RETURN(42)).FINALLY(rec("finally")) >> rec("never")
    assert await run(program) == python()


async def test_return_from_a_loop_inside_a_sub_program() -> None:
    def python() -> tuple[Any, list[str]]:
        trace: list[str] = []
        state = {"i": 0}

        def find() -> int:
            while True:
                try:
                    state["i"] += 1
                    trace.append(f"i={state['i']}")
                    if state["i"] % 3 == 0:
                        return state["i"] * 10
                finally:
                    trace.append("sub-finally")

        for _ in range(2):
            trace.append(f"got:{find()}")
        return None, trace

    find = SUB(
        "find",
        WHILE(node(lambda ctx: True, name="forever")).ACTION(
            TRY(
                incr("i")
                >> IF(
                    node(lambda ctx: ctx.state.i % 3 == 0, name="i%3==0"),
                    RETURN(lambda ctx: ctx.state.i * 10),
                )
            ).FINALLY(rec("sub-finally"))
        ),
    )
    show = node(lambda ctx: ctx.state.trace.append(f"got:{ctx.value}"), name="show")
    assert await run(CALL(find) >> show >> CALL("find") >> show) == python()


async def test_call_as_condition_and_nested_sub_calls() -> None:
    def python() -> list[str]:
        trace, i = [], 0

        def more() -> bool:
            nonlocal i
            i += 1
            trace.append(f"i={i}")
            return i < 4

        while more():
            trace.append("body")
        return trace

    more = SUB("more", CALL("bump") >> RETURN(lambda ctx: ctx.state.i < 4))
    bump = SUB("bump", incr("i"))
    program = WHILE(CALL(more)).ACTION(rec("body"))
    assert (await run(program, subs=[bump]))[1] == python()


async def test_return_value_and_sync_async_blocking_nodes() -> None:
    async def a(ctx: NodeContext) -> None:
        ctx.state.trace.append("async")

    def b(ctx: NodeContext) -> None:
        ctx.state.trace.append("blocking")

    program = node(a) >> node(b, name="b", blocking=True) >> NOP >> RETURN({"ok": [1, 2]})
    assert await run(program) == ({"ok": [1, 2]}, ["async", "blocking"])


async def test_break_inside_except_handler_clears_the_handled_exception() -> None:
    def python() -> list[str]:
        trace, i = [], 0
        while True:
            i += 1
            try:
                trace.append("boom")
                raise Boom("boom")
            except Boom:
                trace.append(f"i={i}")
                if i == 2:
                    break
            finally:
                trace.append("finally")
        return trace

    program = WHILE(node(lambda ctx: True, name="forever")).ACTION(
        TRY(raiser(Boom, "boom"))
        .EXCEPT(Boom, incr("i") >> IF(test_("i", "==", 2), BREAK))
        .FINALLY(rec("finally"))
    ) >> node(lambda ctx: ctx.state.trace.append(f"exc:{ctx.exception}"), name="after")
    _, trace = await run(program)
    assert trace == [*python(), "exc:None"]
