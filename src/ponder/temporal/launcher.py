"""`TemporalLauncher`: ``ponder serve --temporal`` — the HTTP server's runs on Temporal.

A run started over HTTP is a workflow on the task queue's workers; the server keeps a
`RunRecord` for it and one follower task that reads the workflow's ``events`` Query
(after the last sequence number it has) into the registry, so ``GET /v1/runs/{id}``,
the SSE stream, the OpenAI endpoint and the viewer work as on local runs. Approval is
the workflow's ``decide`` Update, cancelling cancels the workflow. Runs started
elsewhere (``ponder run --temporal --detach``) are adopted by id, and listed from
Temporal's visibility store. The client connects on first use, on the server's own
event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Sequence
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError

from ponder.events import RunFailed, event_to_dict
from ponder.exceptions import PonderError, UserError
from ponder.messages import Message
from ponder.server.elicitations import PendingElicitations
from ponder.server.local_launcher import RunConflict
from ponder.server.runs import MemoryRunRegistry, RunRecord, RunRegistry
from ponder.status import RunStatus
from ponder.temporal.client import MEMO_PROMPT, TemporalAgent, connect
from ponder.temporal.workflow import MEMO_STATUS, WORKFLOW_NAME

__all__ = ["TemporalLauncher"]

_ENDS = frozenset({"run_finished", "run_failed", "run_cancelled"})
_STATUSES: dict[Any, RunStatus] = {
    WorkflowExecutionStatus.RUNNING: "running",
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}
_SETTLE_SECONDS = 15.0


class TemporalLauncher:
    """Starts runs on the workers of ``task_queue`` at ``address`` and follows them."""

    def __init__(
        self,
        address: str,
        task_queue: str,
        *,
        namespace: str = "default",
        registry: RunRegistry | None = None,
        poll: float = 0.1,
    ) -> None:
        if not task_queue:
            raise UserError("a Temporal launcher needs a task queue name")
        self.address, self.task_queue, self.namespace = address, task_queue, namespace
        self._remote: TemporalAgent | None = None
        self._connecting = asyncio.Lock()
        self.registry: RunRegistry = registry or MemoryRunRegistry()
        self.elicitations = PendingElicitations()  # MCP servers run on the workers
        self.poll = poll
        self._followers: dict[str, asyncio.Task[None]] = {}
        self._requests: set[asyncio.Task[Any]] = set()

    async def remote(self) -> TemporalAgent:
        """The client for the task queue, connected on first use."""
        async with self._connecting:
            if self._remote is None:
                client = await connect(self.address, namespace=self.namespace)
                self._remote = TemporalAgent(client, self.task_queue)
            return self._remote

    def start(self, prompt: str, history: Sequence[Message] = ()) -> RunRecord:
        """Register the run and start its workflow in the background."""
        record = self.registry.create(uuid.uuid4().hex, prompt)
        self._spawn(record.run_id, self._start(record, list(history)))
        return record

    async def _start(self, record: RunRecord, history: list[Message]) -> None:
        try:
            remote = await self.remote()
            await remote.start(record.prompt, run_id=record.run_id, message_history=history)
        except (PonderError, RPCError) as error:
            await self._end(record, "failed", str(error), type(error).__name__)
            return
        await self._follow(record)

    def _spawn(self, run_id: str, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._followers[run_id] = task
        task.add_done_callback(lambda _: self._followers.pop(run_id, None))

    def _following(self, run_id: str) -> bool:
        task = self._followers.get(run_id)
        return task is not None and not task.done()

    def _ensure_follower(self, record: RunRecord) -> None:
        if not self._following(record.run_id):
            self._spawn(record.run_id, self._follow(record))

    async def _follow(self, record: RunRecord) -> None:
        """Mirror the workflow's events until it closes, then record how it ended."""
        run_id, remote = record.run_id, await self.remote()
        finished = asyncio.ensure_future(remote.client.get_workflow_handle(run_id).result())
        delay = self.poll
        try:
            while True:
                got = await self._pull(record)
                if finished.done():
                    await self._pull(record)  # the last events, written before it closed
                    break
                delay = self.poll if got else min(delay * 1.5, 1.0)
                await asyncio.wait({finished}, timeout=delay)
        finally:
            if not finished.done():
                finished.cancel()
            with contextlib.suppress(BaseException):
                await finished
        await self._settle(record)

    async def _pull(self, record: RunRecord) -> bool:
        """Append the events after the record's last one; True if there were any."""
        try:
            events = await (await self.remote()).events(record.run_id, record.last_seq)
        except RPCError:
            return False  # no worker answers now; the next poll asks again
        for event in events:
            if event.kind == "run_started" and not record.prompt:
                record.prompt = event.prompt
            await self.registry.append(record.run_id, event_to_dict(event))
        return bool(events)

    async def _settle(self, record: RunRecord) -> None:
        """Record the closed workflow's status, output or error."""
        try:
            found = await (await self.remote()).status(record.run_id)
        except (PonderError, RPCError) as error:
            await self._end(record, "failed", str(error), type(error).__name__)
            return
        status = found.get("status")
        if status == "completed":
            await self.registry.finish(record.run_id, "completed", output=found.get("output"))
        elif status == "cancelled":
            await self._end(record, "cancelled", "cancelled by request", "Cancelled")
        else:
            await self._end(record, "failed", str(found.get("error") or status), "RunFailed")

    async def _end(self, record: RunRecord, status: RunStatus, message: str, kind: str) -> None:
        """Close the log with ``run_failed`` (as a local run's is) and set the status."""
        last = record.events[-1].get("kind") if record.events else None
        if last not in ("run_failed", "run_finished"):
            event = RunFailed(error=message, error_type=kind)
            event.run_id, event.seq, event.time = record.run_id, record.last_seq + 1, time.time()
            await self.registry.append(record.run_id, event_to_dict(event))
        await self.registry.finish(record.run_id, status, error=f"{kind}: {message}")

    async def lookup(self, run_id: str) -> RunRecord | None:
        """The run's record; a workflow this server has not seen is adopted and followed."""
        record = self.registry.get(run_id)
        if record is not None:
            return record
        try:
            await (await self.remote()).status(run_id)
        except (UserError, RPCError):
            return None
        record = RunRecord(run_id=run_id, prompt="")
        self.registry.add(record)
        self._ensure_follower(record)
        return record

    async def stored_records(self, limit: int) -> list[RunRecord]:
        """The task queue's newest ponder workflows that this server has no record of."""
        query = f'WorkflowType = "{WORKFLOW_NAME}" AND TaskQueue = "{self.task_queue}"'
        found: list[RunRecord] = []
        client = (await self.remote()).client
        try:
            async for execution in client.list_workflows(query):
                if len(found) >= limit:
                    break
                if self.registry.get(execution.id) is not None:
                    continue
                memo = await execution.memo()
                status = _STATUSES.get(execution.status, "failed")
                if status == "running" and memo.get(MEMO_STATUS) == "suspended":
                    status = "suspended"
                created = execution.start_time.timestamp()
                prompt = str(memo.get(MEMO_PROMPT, ""))
                found.append(RunRecord(execution.id, prompt, created=created, status=status))
        except RPCError:
            return found  # visibility is optional: the server's own runs are still listed
        return found

    def cancel(self, run_id: str) -> bool:
        """Ask the running workflow to cancel; False unless it runs and is followed here."""
        record = self.registry.get(run_id)
        if record is None or record.status != "running" or not self._following(run_id):
            return False
        task = asyncio.get_running_loop().create_task(self._cancel(run_id))
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)
        return True

    async def _cancel(self, run_id: str) -> None:
        await (await self.remote()).cancel(run_id)

    async def cancel_suspended(self, record: RunRecord) -> None:
        """Cancel a workflow that waits for a decision, and wait (a while) for its end."""
        await self._cancel(record.run_id)
        self._ensure_follower(record)
        task = self._followers.get(record.run_id)
        if task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), _SETTLE_SECONDS)

    async def wait(self, run_id: str) -> None:
        """Return when the run has ended or waits for a decision."""
        record = self.registry.get(run_id)
        while record is not None and self._following(run_id) and record.status == "running":
            await self.registry.wait(run_id, record.last_seq, 1.0)

    async def resume(self, record: RunRecord, decision: Any) -> RunRecord:
        """Send the decision (the workflow's ``decide`` Update) and wait for the run to go on.

        ``UserError`` (400) for a decision that does not fit the pending calls; `RunConflict`
        (409) for a run that does not wait for one.
        """
        if record.is_done:
            raise RunConflict(f"run {record.run_id!r} is {record.status}; it cannot be resumed")
        if record.status != "suspended":
            raise RunConflict(f"run {record.run_id!r} is running, not waiting for a decision")
        seq = record.last_seq
        await (await self.remote()).decide(record.run_id, decision)
        self._ensure_follower(record)
        deadline = time.monotonic() + _SETTLE_SECONDS
        while record.status == "suspended" and time.monotonic() < deadline:
            await self.registry.wait(record.run_id, seq, 0.5)
            seq = record.last_seq
        return record

    async def shutdown(self) -> None:
        """Stop following; the workflows go on on their workers."""
        tasks = [*self._followers.values(), *self._requests]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
