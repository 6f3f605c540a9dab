"""Malformed programs are refused at compile time with a CompileError naming the construct."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.exceptions import CompileError
from ponder.vm import (
    BREAK,
    CALL,
    CONTINUE,
    DO,
    IF,
    NOP,
    RETURN,
    SUB,
    SUSPEND,
    TRY,
    WHILE,
    compile_program,
    node,
)


@node
def a(ctx: Any) -> None:
    pass


@node
def cond(ctx: Any) -> bool:
    return False


CASES: list[tuple[str, Any, str]] = [
    ("break at top level", a >> BREAK, "BREAK outside a loop"),
    ("continue in an IF outside loops", IF(cond, CONTINUE), "CONTINUE outside a loop"),
    (
        "break in a sub called from a loop",
        WHILE(cond).ACTION(CALL(SUB("s", BREAK))),
        "BREAK outside a loop",
    ),
    ("except with a non-exception type", TRY(a).EXCEPT(int, a), "EXCEPT(<class 'int'>)"),
    ("except with a string", TRY(a).EXCEPT("ValueError", a), "EXCEPT('ValueError')"),
    ("except with an empty tuple", TRY(a).EXCEPT((), a), "EXCEPT(())"),
    ("except KeyboardInterrupt", TRY(a).EXCEPT(KeyboardInterrupt, a), "Exception subclass"),
    ("try with nothing", TRY(a), "TRY: needs at least one EXCEPT or a FINALLY"),
    ("try else without except", TRY(a).ELSE(a).FINALLY(a), "TRY ... ELSE"),
    ("empty while body", WHILE(cond).ACTION([]), "WHILE(cond).ACTION: the body is empty"),
    ("while without action", WHILE(cond), "WHILE(cond): missing .ACTION"),
    ("do without while", DO(a), "missing .WHILE"),
    ("empty do body", DO(None).WHILE(cond), "DO body of DO(...).WHILE(cond): the body is empty"),
    ("empty if body", IF(cond, []), "IF(cond) branch 1: the body is empty"),
    ("empty else body", IF(cond, a).ELSE([]), "IF(cond).ELSE: the body is empty"),
    ("empty try body", TRY([]).FINALLY(a), "TRY body: the body is empty"),
    ("empty except body", TRY(a).EXCEPT(ValueError, []), "EXCEPT(ValueError): the body is empty"),
    ("empty finally", TRY(a).FINALLY([]), "TRY ... FINALLY: the body is empty"),
    ("empty sub", CALL(SUB("s", [])), "SUB('s'): the body is empty"),
    ("empty program", [], "program: the body is empty"),
    (
        "unknown sub",
        SUB("greet", a) >> CALL("gret"),
        "CALL('gret'): no such SUB; did you mean 'greet'",
    ),
    ("condition is a loop", IF(WHILE(cond).ACTION(a), a), "the condition must be a node or a CALL"),
    ("return a block", RETURN(IF(cond, a)), "RETURN: the value must be a constant or a node"),
    ("return non-JSON", RETURN({1, 2}), "RETURN: {1, 2} is not JSON-serialisable"),
    ("suspend non-JSON payload", SUSPEND("ask", object()), "SUSPEND('ask')"),
    (
        "same name, two callables",
        a >> node(lambda ctx: None, name="a"),
        "node 'a': two different callables",
    ),
    (
        "same sub name, two bodies",
        CALL(SUB("s", a)) >> CALL(SUB("s", cond)),
        "SUB('s') is defined twice",
    ),
    ("not a block", [a, 42], "42 is not a block"),
]


@pytest.mark.parametrize(("program", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_programs_raise_compile_error(program: Any, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_program(program)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: IF(cond, a).ELSE(a).ELIF(cond, a), "ELIF after ELSE"),
        (lambda: IF(cond, a).ELSE(a).ELSE(a), "a second ELSE"),
        (lambda: node(42, name="x"), "is not callable"),  # type: ignore[call-overload]
        (lambda: node(a.fn, name=""), "non-empty string name"),
        (lambda: node(cond.fn, name="c", blocking=True) and node(_async, blocking=True), "sync"),
        (lambda: node(cond.fn, blocking=True, returns_awaitable=True), "return their value"),
        (lambda: SUSPEND(42), "the reason must be a string"),  # type: ignore[arg-type]
        (lambda: CALL(42), "expected a SUB or its name"),  # type: ignore[arg-type]
        (lambda: SUB("", a), "non-empty string"),
        (lambda: compile_program(a, subs=["s"]), "is not a SUB"),  # type: ignore[list-item]
    ],
)
def test_malformed_construction_raises_compile_error(build: Any, message: str) -> None:
    with pytest.raises(CompileError, match=message):
        build()


async def _async(ctx: Any) -> None:
    pass


def test_a_valid_program_compiles_and_break_in_try_in_loop_is_fine() -> None:
    program = compile_program(WHILE(cond).ACTION(TRY(IF(cond, BREAK) >> NOP).FINALLY(a)))
    assert len(program) > 0


def test_the_public_names_are_exported() -> None:
    import ponder.vm as vm

    contract = (
        "node Node IF WHILE DO TRY BREAK CONTINUE SUSPEND RETURN NOP NATIVE_DO NATIVE_WHILE "
        "NATIVE_IF SUB CALL compile_program Program Interpreter Finished Suspended NodeContext"
    ).split()
    assert set(contract) <= set(vm.__all__)
    assert all(hasattr(vm, name) for name in vm.__all__)
