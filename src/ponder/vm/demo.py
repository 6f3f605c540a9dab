"""`make demo`: a short offline demonstration of ponder's instruction VM.

It compiles a small workflow, prints its disassembly, runs it until a node asks for
approval, writes the snapshot as JSON text, restores it into a new interpreter and
resumes it with the answer.
"""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel

from ponder.exceptions import Suspend
from ponder.vm import (
    BREAK,
    IF,
    RETURN,
    TRY,
    WHILE,
    Interpreter,
    NodeContext,
    compile_program,
    node,
)

__all__ = ["main"]


class DemoState(BaseModel):
    """The run state of the demo workflow."""

    step: int = 0
    log: list[str] = []


Context = NodeContext[DemoState, None]


@node
def start(ctx: Context) -> None:
    """Open the log."""
    ctx.state.log.append("start")


@node
def more(ctx: Context) -> bool:
    """Loop while fewer than five steps ran."""
    return ctx.state.step < 5


@node
async def work(ctx: Context) -> None:
    """One step of work."""
    ctx.state.step += 1
    ctx.state.log.append(f"step {ctx.state.step}")


@node
def needs_approval(ctx: Context) -> bool:
    """Step three needs a human."""
    return ctx.state.step == 3


@node
def approve(ctx: Context) -> None:
    """Suspend until someone answers; on resume the answer is ``ctx.resume_value``."""
    if ctx.resume_value is None:
        raise Suspend("approval", {"step": ctx.state.step})
    ctx.state.log.append(f"approved: {ctx.resume_value}")
    if ctx.resume_value != "yes":
        raise PermissionError("the step was refused")


@node
def refused(ctx: Context) -> None:
    """Record that the approval was refused."""
    ctx.state.log.append(f"refused: {ctx.exception}")


@node
def tidy(ctx: Context) -> None:
    """Always runs after the approval block."""
    ctx.state.log.append("tidy")


WORKFLOW = (
    start
    >> WHILE(more).ACTION(
        work
        >> IF(
            needs_approval,
            TRY(approve).EXCEPT(PermissionError, refused >> BREAK).FINALLY(tidy),
        )
    )
    >> RETURN(lambda ctx: ctx.state.log[-1])
)


async def demo() -> None:
    """Run the demonstration."""
    program = compile_program(WORKFLOW)
    print(program.dis())
    first = Interpreter(program, DemoState())
    outcome = await first.run()
    print(f"\nfirst run: {outcome}  (pc {first.pc})")
    text = json.dumps(first.snapshot())
    print(f"snapshot: {len(text)} bytes of JSON, fingerprint {program.fingerprint[:16]}")
    second = Interpreter.restore(program, json.loads(text), state_type=DemoState)
    outcome = await second.resume("yes")
    print(f"resumed in a new interpreter: {outcome}")
    print("log:", " | ".join(second.state.log))


def main() -> None:
    """Entry point of ``python -m ponder.vm.demo``."""
    asyncio.run(demo())


if __name__ == "__main__":
    main()
