"""A run and the sub-agents its tools start.

A sub-agent call finds its parent run in `ToolContext.run` (the tool batch passes it);
`is_held` tells the run machinery that a call's child waits.
"""

from __future__ import annotations

from ponder.tools.tool import ToolResult

__all__ = ["is_held"]


def is_held(result: ToolResult) -> bool:
    """True for the result of a sub-agent call whose child waits (approval, a question).

    Such a call is not answered: the parent suspends on it too, and when the parent is
    resumed the call runs again and hands the decision on to the child.
    """
    return isinstance(result.data, dict) and result.data.get("held") is True
