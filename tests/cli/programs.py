"""A user's workflow program, for ``ponder dis module:attr``."""

from __future__ import annotations

from ponder.vm import BREAK, IF, WHILE, NodeContext, compile_program, node


@node(name="CHECK_MORE")
def more(ctx: NodeContext) -> bool:
    return True


@node(name="DO_WORK")
async def work(ctx: NodeContext) -> None:
    return None


@node(name="IS_DONE")
def done(ctx: NodeContext) -> bool:
    return True


BLOCK = WHILE(more).ACTION(work >> IF(done, BREAK))
PROGRAM = compile_program(BLOCK)
NOT_A_PROGRAM = 42
