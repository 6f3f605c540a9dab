"""Nodes that record what they do into the state's trace, for the construct tests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ponder.vm import Finished, Interpreter, NodeContext, compile_program, node


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
