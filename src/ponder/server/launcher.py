"""`Launcher`: what the HTTP server needs from whatever runs its runs.

The routes only start, find, follow, decide and cancel runs; where the runs execute is
the launcher's business. `RunLauncher` runs them on the server's own event loop (with an
optional store); ``ponder.temporal.launcher.TemporalLauncher`` starts them on a Temporal task
queue's workers and mirrors each workflow's events into the registry. Either way a run's
events land in the launcher's `RunRegistry`, which the SSE and OpenAI routes follow, so
the viewer cannot tell the two apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ponder.messages import Message
from ponder.server.elicitations import PendingElicitations
from ponder.server.runs import RunRecord, RunRegistry

__all__ = ["Launcher"]


class Launcher(Protocol):
    """Starts runs and keeps each one's record and events in ``registry``."""

    @property
    def registry(self) -> RunRegistry:
        """Where the runs' records and event logs live (the routes read events there)."""
        ...

    @property
    def elicitations(self) -> PendingElicitations:
        """MCP elicitations waiting for an answer over the API."""
        ...

    def start(self, prompt: str, history: Sequence[Message] = ()) -> RunRecord:
        """Register and start a run; its events reach the registry as they happen."""
        ...

    async def lookup(self, run_id: str) -> RunRecord | None:
        """The run's record, adopting a run started elsewhere; None if unknown."""
        ...

    async def stored_records(self, limit: int) -> list[RunRecord]:
        """Runs known elsewhere (a store, a Temporal namespace) but not here, newest first."""
        ...

    def cancel(self, run_id: str) -> bool:
        """Ask a running run to stop; False when it is not running here."""
        ...

    async def cancel_suspended(self, record: RunRecord) -> None:
        """Cancel a suspended run for good."""
        ...

    async def wait(self, run_id: str) -> None:
        """Return when the run has ended or waits for a decision."""
        ...

    async def resume(self, record: RunRecord, decision: Any) -> RunRecord:
        """Continue a suspended run with ``decision``; returns once it is under way."""
        ...

    async def shutdown(self) -> None:
        """Stop driving (or following) runs; the server is going away."""
        ...
