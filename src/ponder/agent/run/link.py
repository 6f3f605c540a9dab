"""The run whose task is executing, for the sub-agents its tools start.

A sub-agent call finds its parent run through `CURRENT_RUN` (tool calls inherit the
driver's context); `is_held` tells the run machinery that a call's child waits.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["CURRENT_RUN", "RunLink", "is_held"]


class RunLink:
    """The run whose task is executing, as `CURRENT_RUN` holds it; ``run`` is cleared at its end.

    asyncio copies the context into every callback scheduled during the run, and a
    cancelled timer keeps that copy until its time comes: the variable must not keep the
    run itself alive.
    """

    __slots__ = ("run",)

    def __init__(self, run: RunContext) -> None:
        self.run: RunContext | None = run


CURRENT_RUN: contextvars.ContextVar[RunLink | None] = contextvars.ContextVar(
    "ponder_current_run", default=None
)
"""The run whose task is executing (tool calls inherit it): a sub-agent's parent."""


def is_held(result: ToolResult) -> bool:
    """True for the result of a sub-agent call whose child waits (approval, a question).

    Such a call is not answered: the parent suspends on it too, and when the parent is
    resumed the call runs again and hands the decision on to the child.
    """
    return isinstance(result.data, dict) and result.data.get("held") is True
