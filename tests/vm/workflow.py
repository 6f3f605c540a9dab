"""A non-trivial workflow shared by the snapshot tests and the process they start."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from pydantic import BaseModel

from ponder.exceptions import Suspend
from ponder.vm import (
    BREAK,
    CALL,
    CONTINUE,
    DO,
    IF,
    RETURN,
    SUB,
    SUSPEND,
    TRY,
    WHILE,
    Finished,
    Interpreter,
    NodeContext,
    Outcome,
    Program,
    compile_program,
    node,
)


class FlowState(BaseModel):
    i: int = 0
    j: int = 0
    total: int = 0
    asked: bool = False
    trace: list[str] = []


class Boom(Exception):
    pass


def note(label: str) -> Any:
    return node(
        lambda ctx: ctx.state.trace.append(f"{label} i={ctx.state.i} j={ctx.state.j}"), name=label
    )


def check(name: str, test: Any) -> Any:
    return node(lambda ctx: bool(test(ctx.state)), name=name)


def change(name: str, update: Any) -> Any:
    def apply(ctx: NodeContext) -> None:
        update(ctx.state)
        ctx.state.trace.append(name)

    return node(apply, name=name)


def boom(ctx: NodeContext) -> None:
    ctx.state.trace.append("boom")
    raise Boom(f"boom at j={ctx.state.j}", ctx.state.j)


def seen(ctx: NodeContext) -> None:
    ctx.state.trace.append(f"seen {type(ctx.exception).__name__}{ctx.exception.args}")  # type: ignore[union-attr]


def approval(ctx: NodeContext) -> None:
    if not ctx.state.asked:
        ctx.state.asked = True
        raise Suspend("approve", {"i": ctx.state.i})
    ctx.state.trace.append(f"approved {ctx.resume_value}")


def build() -> Program:
    score = SUB(
        "score",
        TRY(
            change("add", lambda s: setattr(s, "total", s.total + s.i))
            >> IF(
                check("total odd", lambda s: s.total % 2), RETURN(lambda ctx: ctx.state.total * 2)
            )
        ).FINALLY(note("score-finally")),
    )
    inner = DO(
        change("j+1", lambda s: setattr(s, "j", s.j + 1))
        >> IF(check("j==3", lambda s: s.j == 3), node(boom, name="boom"))
        >> IF(check("j odd", lambda s: s.j % 2), CONTINUE)
        >> note("inner")
    ).WHILE(check("j<i+2", lambda s: s.j < s.i + 2))
    body = (
        change("i+1", lambda s: setattr(s, "i", s.i + 1))
        >> change("j=0", lambda s: setattr(s, "j", 0))
        >> TRY(IF(check("i==2", lambda s: s.i == 2), CONTINUE) >> inner)
        .EXCEPT(Boom, node(seen, name="seen") >> SUSPEND("handled", {"why": "boom"}))
        .ELSE(note("else"))
        .FINALLY(note("finally") >> IF(check("i==4", lambda s: s.i == 4), BREAK))
        >> IF(CALL(score), note("scored")).ELSE(note("not scored"))
    )
    return compile_program(
        note("start")
        >> node(approval, name="approval")
        >> WHILE(check("i<5", lambda s: s.i < 5)).ACTION(body)
        >> RETURN(lambda ctx: {"i": ctx.state.i, "total": ctx.state.total})
    )


async def run_to_end(vm: Interpreter) -> list[Outcome]:
    """Run, continuing through every suspension, until the program finishes."""
    outcomes: list[Outcome] = []
    while not isinstance(outcome := await vm.run(), Finished):
        outcomes.append(outcome)
    return [*outcomes, outcome]


def describe(outcomes: list[Outcome]) -> list[Any]:
    return [
        [o.kind, getattr(o, "reason", None), getattr(o, "payload", getattr(o, "value", None))]
        for o in outcomes
    ]


def main() -> None:
    """Restore the snapshot on stdin in this fresh process and print what the run did."""
    snapshot = json.loads(sys.stdin.read())
    vm = Interpreter.restore(build(), snapshot, state_type=FlowState)
    result = describe(asyncio.run(run_to_end(vm)))
    print(json.dumps({"outcomes": result, "trace": vm.state.trace}))
