"""Stopping the server without losing runs, and picking them back up when it starts again.

A graceful stop (Ctrl-C, SIGTERM) interrupts every run that is checkpointed to the
server's store, as ``ponder run --store`` does on Ctrl-C: each run stops as soon as none
of its tool calls is open (within a drain time), as ``interrupted`` — resumable, with
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
    from ponder.server.local_launcher import RunLauncher

__all__ = ["RESUMED_STATUSES", "has_open_call", "recover_runs", "stop_runs"]

RESUMED_STATUSES = ("interrupted", "running")
"""Stored statuses a starting server resumes: stopped by a shutdown, or by a crash."""
_POLL = 0.05
_LOG = logging.getLogger("uvicorn.error")
"""The server's own log (uvicorn prints it; ponder's loggers print nothing by default)."""


def has_open_call(record: RunRecord | None) -> bool:
    """True when stopping the run now would leave a tool call open (its result unknown).

    From the model's answer (``usage``) until the calls it asked for have finished, a
    stop leaves them open, and a resume can only tell the model they were interrupted.
    Read from the run's log as its stream delivered it (hooks run later than that).
    """
    is_open, running = False, set()
    for event in record.events if record is not None else ():
        kind = event.get("kind")
        if kind == "round_started":
            is_open = False
        elif kind == "usage":
            is_open = True
        elif kind == "tool_call_started":
            running.add(event.get("call_id"))
        elif kind in ("tool_call_finished", "tool_call_failed"):
            running.discard(event.get("call_id"))
            is_open = bool(running)
    return is_open


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
        ready = [r for r in waiting if tasks[r].done() or _may_stop(launcher, r, deadline)]
        for _ in range(3):  # let the runs' streams deliver what the runs emitted just now
            await asyncio.sleep(0)
        for run_id in ready:
            waiting.remove(run_id)
            if not tasks[run_id].done():
                if not _may_stop(launcher, run_id, deadline):
                    waiting.append(run_id)  # it moved on: look again
                    continue
                launcher.interrupt(run_id)
        if waiting:
            await asyncio.sleep(_POLL)
    if tasks:  # `wait`, not `gather`: a cancelled stop leaves the runs to record their stop
        await asyncio.wait(tasks.values())


def _may_stop(launcher: RunLauncher, run_id: str, deadline: float) -> bool:
    if launcher.hurry or time.monotonic() >= deadline:
        return True
    return not has_open_call(launcher.registry.get(run_id))


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
