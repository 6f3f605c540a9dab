"""Every construct run on the VM and compared with the same logic in plain Python."""

from __future__ import annotations

import pytest

from ponder.vm import (
    BREAK,
    CONTINUE,
    DO,
    IF,
    NATIVE_DO,
    NATIVE_IF,
    NATIVE_WHILE,
    TRY,
    WHILE,
    node,
)
from tests.vm.recording import State, incr, rec, reset, run, test_


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
