"""TRY/EXCEPT/ELSE/FINALLY, RETURN and sub-programs compared with the same logic in Python."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.exceptions import VMError
from ponder.vm import (
    BREAK,
    CALL,
    IF,
    NOP,
    RETURN,
    SUB,
    TRY,
    WHILE,
    Interpreter,
    NodeContext,
    compile_program,
    node,
)
from tests.vm.recording import State, incr, rec, run, test_


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


async def test_a_sync_node_that_hands_on_a_coroutine_has_it_awaited() -> None:
    async def step(ctx: NodeContext, name: str) -> bool:
        ctx.state.trace.append(name)
        return True

    handing = node(lambda ctx: step(ctx, "handed"), name="h", returns_awaitable=True)
    renamed = node(handing, name="renamed")  # keeps the flag
    program = handing >> renamed >> IF(lambda ctx: ctx.value is True, rec("its value"))
    assert await run(program >> RETURN(1)) == (1, ["handed", "handed", "its value"])


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
