"""Stopping the server without losing runs, and picking them back up when it starts again.

A graceful stop (Ctrl-C, SIGTERM) interrupts every run that is checkpointed to the
server's store, as ``ponder run --store`` does on Ctrl-C: each run's running tool calls
may finish first (within a drain time), then it stops as ``interrupted`` — resumable, with
every finished call's result kept. A server started on the same store resumes them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from ponder.server.accepted import recall, start_over
from ponder.server.runs import RunRecord

if TYPE_CHECKING:
    from ponder.server.launcher import RunLauncher

__all__ = ["RESUMED_STATUSES", "recover_runs", "running_calls", "stop_runs"]

RESUMED_STATUSES = ("interrupted", "running")
"""Stored statuses a starting server resumes: stopped by a shutdown, or by a crash."""
_POLL = 0.05
_LOG = logging.getLogger("ponder.server")


def running_calls(record: RunRecord | None) -> set[str]:
    """The ids of the run's tool calls that have started and not finished (from its log)."""
    running: set[str] = set()
    for event in record.events if record is not None else ():
        kind, call_id = event.get("kind"), str(event.get("call_id"))
        if kind == "tool_call_started":
            running.add(call_id)
        elif kind in ("tool_call_finished", "tool_call_failed"):
            running.discard(call_id)
    return running


async def stop_runs(launcher: RunLauncher, drain_seconds: float) -> None:
    """Interrupt the runs a store keeps (after their running calls), cancel the others."""
    tasks = launcher.tasks()
    waiting: list[str] = []
    for run_id, task in tasks.items():
        if launcher.can_interrupt(run_id):
            waiting.append(run_id)
        else:
            task.cancel()
    deadline = time.monotonic() + max(drain_seconds, 0.0)
    while waiting:
        for run_id in list(waiting):
            if tasks[run_id].done():
                waiting.remove(run_id)
            elif time.monotonic() >= deadline or not running_calls(launcher.registry.get(run_id)):
                launcher.interrupt(run_id)
                waiting.remove(run_id)
        if waiting:
            await asyncio.sleep(_POLL)
    await asyncio.gather(*tasks.values(), return_exceptions=True)


async def recover_runs(launcher: RunLauncher, limit: int = 10_000) -> list[str]:
    """Resume the runs a server accepted on this store that a stop or a crash cut short.

    That is the store's ``interrupted`` and ``running`` runs with a request a server
    accepted (`ponder.server.accepted`): runs other programs keep in the store are left
    alone. A run another live process holds is left to it (its lease refuses the resume);
    one never checkpointed starts over; one that cannot be resumed is logged and skipped.
    Returns the ids resumed.
    """
    store = launcher.store
    if store is None:
        return []
    found: list[Any] = []
    for status in RESUMED_STATUSES:
        found += await store.list_runs(status=status, limit=limit)
    resumed: list[str] = []
    for stored in sorted(found, key=lambda r: r.created):
        run_id = stored.run_id
        try:
            if launcher.is_active(run_id) or await recall(store, run_id) is None:
                continue
            if await start_over(launcher, run_id) is None:
                record = await launcher.lookup(run_id)
                if record is None:
                    continue
                await launcher.resume(record, None)
        except Exception as error:  # one run's trouble must not stop the others
            _LOG.warning("run %s was not resumed: %s", run_id, error)
            continue
        resumed.append(run_id)
    return resumed
