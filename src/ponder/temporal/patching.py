"""Changing a program without breaking the runs in flight: Temporal's patching, for ponder.

A run on Temporal replays its history on every new worker, so the program must take the
same steps it took when the history was written. A strategy whose behaviour changes marks
the change with `patched`; runs that started before the change replay the old way:

```python
from ponder.temporal import patched

class MyStrategy(ReActStrategy):
    async def on_entry(self) -> None:
        if patched("greet-first"):      # new runs (and every local run) greet first
            await self.ctx.caller.request("greet", (), "none")
```

Once no run started before the change is left, replace the check with the new code
(or ``workflow.deprecate_patch``). A change of strategy class needs no patch: the class's
import path is in the run's history (the ``ponder.prepare`` result), so runs in flight keep
the class they started with as long as it stays importable.
"""

from __future__ import annotations

from temporalio import workflow

__all__ = [
    "CANCEL_WAITS",
    "CONTINUE_AS_NEW",
    "ELICITATION_HOLDS",
    "PONDER_PATCHES",
    "SUB_AGENT_CHILDREN",
    "SUSPENSION_MEMO",
    "patched",
]

CANCEL_WAITS = "ponder-cancel-waits"
"""A cancelled run says ``cancelling`` and waits until its running activities have stopped.

Runs begun before this change replay as they ran: cancelled at once, their activities
told to stop but not waited for.
"""

SUSPENSION_MEMO = "ponder-suspension-memo"
"""A suspended run keeps what it waits for in its memo, so it can be shown and decided
without a worker; runs begun before keep only their status there."""

SUB_AGENT_CHILDREN = "ponder-sub-agent-children"
"""A sub-agent's call runs as a child workflow (durable, its approvals asked once, its
usage and events rolled up); runs begun before call it as one tool activity."""

ELICITATION_HOLDS = "ponder-elicitation-holds"
"""An MCP server's question suspends the run until it is answered; runs begun before
refuse it ("no one can answer in this run")."""

CONTINUE_AS_NEW = "ponder-continue-as-new"
"""A run past its history budget continues as new under the same workflow id (see
``ponder.temporal.continuation``); runs begun before let their history grow."""

PONDER_PATCHES = (
    CANCEL_WAITS,
    SUSPENSION_MEMO,
    SUB_AGENT_CHILDREN,
    ELICITATION_HOLDS,
    CONTINUE_AS_NEW,
)
"""The patch markers of ponder's own workflow, oldest first (see docs/temporal-upgrades.md)."""


def patched(patch_id: str) -> bool:
    """True where the changed code applies: local runs, and workflow runs begun after it.

    Inside a workflow the answer is recorded in the run's history, so a replay agrees.
    """
    if not workflow.in_workflow():
        return True
    return workflow.patched(patch_id)
