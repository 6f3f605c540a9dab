"""Starting runs in the background, feeding their events to the registry, cancelling them.

With a store, every run is checkpointed; a suspended run (one waiting for approval) can be
resumed here by any client, also when another process started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ponder.agent import Agent
from ponder.agent.launch import Prompt
from ponder.agent.output import OutputSpec
from ponder.agent.run.driver import INTERRUPT
from ponder.agent.stream import RunStream
from ponder.events import RunFailed, RunFinished, event_to_dict
from ponder.exceptions import RunLeaseError, StoreError, UserError
from ponder.media import Image
from ponder.messages import Message
from ponder.server.elicitations import PendingElicitations
from ponder.server.resumed import ResumedRun, RunConflict
from ponder.server.runs import RunRecord, RunRegistry, Turn
from ponder.server.stopping import stop_runs
from ponder.server.stored import damaged_record, record_of
from ponder.status import RunStatus
from ponder.store.base import RunRecord as StoredRecord
from ponder.store.base import Store
from ponder.store.memory import MemoryStore
from ponder.tools.definition import ToolDefinition

__all__ = ["AgentSource", "RunConflict", "RunLauncher"]

AgentSource = Agent | Callable[[], Agent]
_MIN_PREFIX = 4
"""The shortest run id prefix looked up in the store."""
INTERRUPTED = "Interrupted: the server stopped; the run is stored and resumes"


class RunLauncher:
    """Runs agents as tasks on the server's event loop, one registry record per run."""

    def __init__(self, source: AgentSource, registry: RunRegistry, store: Store | None) -> None:
        self._source = source
        self.registry = registry
        self.store = store
        self._agents: dict[str, Agent] = {}
        """The agent each run started with, while it may continue (a config edit spares it)."""
        self._outputs: dict[str, OutputSpec] = {}
        """The output type each typed run started with, while it may continue."""
        self.elicitations = PendingElicitations()
        self._listed: dict[str, tuple[float, RunRecord]] = {}
        """Stored runs' listing records, by run id, with the update time they were read at."""
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.scratch = MemoryStore()
        """Where runs that must be resumable go when the server has no store."""
        self._stores: dict[str, Store] = {}
        self._streams: dict[str, RunStream[Any]] = {}
        self.hurry = False
        """Set by a second Ctrl-C: a stop interrupts runs without waiting for their calls."""
        self.interrupting: set[str] = set()
        """Runs stopped resumably by a shutdown (they end ``interrupted``, not ``cancelled``)."""

    @property
    def fixed_agent(self) -> Agent | None:
        """The server's one agent, or None when each run gets a fresh one from a factory."""
        return self._source if isinstance(self._source, Agent) else None

    def agent(self) -> Agent:
        """The agent for a run (the same one, or a fresh one from the factory).

        Unless it has its own handler, its MCP servers' questions are answered over the API:
        with a store the run suspends on them, without one they wait in this process.
        """
        agent = self._source if isinstance(self._source, Agent) else self._source()
        toolbox = agent.toolbox
        if toolbox.mcp is not None and toolbox.elicitation is None and self.store is None:
            agent.on_elicitation(self.elicitations.ask)
        return agent

    def start(
        self,
        prompt: str,
        history: Sequence[Message] = (),
        *,
        external_tools: Sequence[ToolDefinition] = (),
        resumable: bool = False,
        output: OutputSpec | None = None,
        run_id: str | None = None,
        images: Sequence[Image] = (),
        turn: Turn | None = None,
    ) -> RunRecord:
        """Register and start a run; its events land in the registry as they happen.

        A ``resumable`` run is checkpointed also when the server has no store (in memory);
        with an ``output`` spec the answer is that type's JSON; ``images`` go with the prompt.
        ``run_id`` names the run (a new id by default); one this server knows starts over
        (a run that stopped before its first checkpoint). ``turn``: the session it continues
        (`UserError` without a store) and its usage limits.
        """
        turn = turn or Turn()
        if turn.session_id is not None and self.store is None:
            raise UserError(
                "session_id needs a store to keep the session's turns: start the server "
                "with --store, or send the conversation as history"
            )
        run_id = run_id or uuid.uuid4().hex
        record = self.registry.get(run_id) or self.registry.create(run_id, prompt)
        record.prompt, record.status, record.error = prompt, "running", None
        if output is not None:
            record.is_typed, self._outputs[run_id] = True, output
        store = self.store or (self.scratch if resumable else None)
        if store is not None:
            self._stores[run_id] = store
        given: Prompt = [prompt, *images] if images else prompt
        work = self._drive(record, given, list(history), store, list(external_tools), turn)
        self._spawn(run_id, work)
        return record

    async def _then_forget(self, run_id: str, work: Any) -> None:
        """Run ``work``; a run in the scratch store leaves it once it cannot resume."""
        try:
            await work
        finally:
            record = self.registry.get(run_id)
            if self._stores.get(run_id) is self.scratch and (record is None or record.is_done):
                self._stores.pop(run_id, None)
                await self.scratch.delete(run_id)

    def store_of(self, run_id: str) -> Store | None:
        """The store a run of this server is checkpointed to (the server's, by default)."""
        return self._stores.get(run_id, self.store)

    def _spawn(self, run_id: str, work: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._then_forget(run_id, work))
        self._tasks[run_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(run_id, None))
        return task

    def is_active(self, run_id: str) -> bool:
        """True while a task of this server drives the run."""
        task = self._tasks.get(run_id)
        return task is not None and not task.done()

    def agent_of(self, run_id: str) -> Agent:
        """The agent a run of this server started with; a new one for a run from elsewhere."""
        return self._agents.get(run_id) or self.agent()

    def output_of(self, run_id: str) -> OutputSpec | None:
        """The output type a run of this server started with (None: the stored one, if any)."""
        return self._outputs.get(run_id)

    def forget_agent(self, record: RunRecord) -> None:
        """Drop the run's agent (and output type) unless the run waits to continue."""
        if record.status != "suspended":
            self._agents.pop(record.run_id, None)
            self._outputs.pop(record.run_id, None)

    async def lookup(self, run_id: str) -> RunRecord | None:
        """The run's record: known here, or adopted from the store; None if unknown.

        A unique prefix of a run id finds the run too; `UserError` if several match.
        """
        record = self.registry.get(run_id)
        if record is not None:
            return record
        run_id = await self._full_id(run_id)
        record = self.registry.get(run_id)
        if record is not None or self.store is None:
            return record
        try:
            stored = await self.store.load(run_id)
            events = await self.store.load_events(run_id)
            record = record_of(stored, events)
        except StoreError as error:
            if run_id not in await self.store.find_ids(run_id):
                return None
            # listed, so found: as what it is now, unreadable (not kept: it may be passing)
            entry = await self._entry(run_id)
            return damaged_record(entry, error)
        self.registry.add(record)
        if record.suspension is not None and not events:
            event = {"kind": "run_suspended", "run_id": run_id, "seq": stored.view.event_seq}
            await self.registry.append(run_id, {**event, "time": time.time(), **record.suspension})
        return record

    async def _entry(self, run_id: str) -> StoredRecord:
        """The store's listing entry of ``run_id`` (a bare one if it is not among the newest)."""
        assert self.store is not None
        found = await self.store.list_runs(limit=1_000_000)
        return next((r for r in found if r.run_id == run_id), StoredRecord(run_id, "", 0, 0, "", 0))

    async def _full_id(self, prefix: str) -> str:
        """The one run id, here or in the store, that starts with ``prefix`` (else itself)."""
        found = {
            r.run_id for r in self.registry.list_runs(1_000_000) if r.run_id.startswith(prefix)
        }
        if self.store is not None and len(prefix) >= _MIN_PREFIX:
            found.update(await self.store.find_ids(prefix))
        if len(found) > 1:
            shown = ", ".join(sorted(found)[:5])
            raise UserError(f"run id prefix {prefix!r} is ambiguous: it starts {shown}")
        return found.pop() if found else prefix

    async def stored_records(self, limit: int) -> list[RunRecord]:
        """The store's newest runs that this server has no record of (not adopted).

        Each carries its outcome (output, stop reason, usage, error), read once per update.
        """
        if self.store is None:
            return []
        found = await self.store.list_runs(limit=limit)
        listed: dict[str, tuple[float, RunRecord]] = {}
        for entry in found:
            if self.registry.get(entry.run_id) is not None:
                continue
            known = self._listed.get(entry.run_id)
            if known is None or known[0] != entry.updated:
                known = (entry.updated, await self._listing(entry))
            listed[entry.run_id] = known
        self._listed = listed
        return [record for _, record in listed.values()]

    async def _listing(self, entry: StoredRecord) -> RunRecord:
        """A stored run's record for the list: the checkpoint's outcome, no event log."""
        assert self.store is not None
        try:
            stored = await self.store.load(entry.run_id)
            failed = entry.status in ("failed", "cancelled")
            events = await self.store.load_events(entry.run_id) if failed else []
            record = record_of(stored, events)
        except StoreError as error:
            return damaged_record(entry, error)  # as opening it shows it
        record.events = []  # the list shows no events; opening the run adopts its log
        return record

    def cancel(self, run_id: str) -> bool:
        """Ask a running run to stop; False when it is not running here."""
        task = self._tasks.get(run_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def cancel_suspended(self, record: RunRecord) -> None:
        """Cancel a suspended run for good: in the store, and in its event log."""
        if self.store is not None:
            await self.store.set_status(record.run_id, "cancelled")
        await self.end_run(record, "cancelled", "cancelled by request", "Cancelled")
        self.forget_agent(record)

    async def wait(self, run_id: str) -> None:
        """Return when the run's task has ended.

        A waiter that goes away (a client dropped its stream) never stops the run: unlike
        ``gather``, ``asyncio.wait`` leaves the task running when the waiter is cancelled.
        """
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.wait((task,))

    async def shutdown(self, drain_seconds: float = 0.0) -> None:
        """Stop every running run and wait for them to record it.

        With a store the runs stop resumably (``interrupted``), each once its running tool
        calls have finished or ``drain_seconds`` have passed; without one they are cancelled.
        """
        await stop_runs(self, drain_seconds)

    def can_interrupt(self, run_id: str) -> bool:
        """True when the run is checkpointed to the server's store (stopping it loses nothing)."""
        return self.store is not None and self._stores.get(run_id, self.store) is self.store

    def interrupt(self, run_id: str) -> None:
        """Stop a running run resumably: it ends ``interrupted`` and a resume continues it."""
        task = self._tasks.get(run_id)
        if task is None or task.done() or run_id in self.interrupting:
            return
        self.interrupting.add(run_id)
        stream = self._streams.get(run_id)
        if stream is not None:
            stream.interrupt()
        else:  # a resume drives the run in its own task
            task.cancel(INTERRUPT)

    def tasks(self) -> dict[str, asyncio.Task[None]]:
        """The runs this server drives now, by id."""
        return dict(self._tasks)

    async def record_interrupted(self, record: RunRecord) -> None:
        """Mark a run the shutdown stopped as ``interrupted`` (resumable)."""
        self.interrupting.discard(record.run_id)
        await self.registry.finish(record.run_id, "interrupted", error=INTERRUPTED)

    async def _drive(
        self,
        record: RunRecord,
        prompt: Prompt,
        history: list[Message],
        store: Store | None,
        external_tools: list[ToolDefinition],
        turn: Turn,
    ) -> None:
        registry, run_id = self.registry, record.run_id
        output: str | None = None
        try:
            agent = self._agents[run_id] = self.agent()
            stream = self._streams[run_id] = agent.stream(
                prompt,
                message_history=history,
                run_id=run_id,
                store=store,
                external_tools=external_tools,
                output_type=self._outputs.get(run_id),
                session_id=turn.session_id,
                limits=turn.limits,
            )
            async for event in stream:
                await registry.append(run_id, event_to_dict(event))
                if isinstance(event, RunFinished):
                    output = event.output
        except asyncio.CancelledError:
            if run_id in self.interrupting and output is not None:
                # stopped after it said it finished: its end is stored (or is redone on resume)
                self.interrupting.discard(run_id)
                await registry.finish(run_id, "completed", output=output)
                return
            if run_id in self.interrupting:
                if store is not None:
                    # a run stopped before its driver began (or before its run began at all)
                    # wrote no status: it must not stay ``running``
                    with contextlib.suppress(StoreError):
                        await store.set_status(run_id, "interrupted")
                await self.record_interrupted(record)
                return
            await self.end_run(record, "cancelled", "cancelled by request", "Cancelled")
            raise
        except Exception as error:
            await self.end_run(record, "failed", str(error), type(error).__name__)
            return
        finally:
            self._streams.pop(run_id, None)
            self.forget_agent(record)
        if record.status != "suspended":
            await registry.finish(run_id, "completed", output=output)

    async def resume(self, record: RunRecord, decision: Any) -> RunRecord:
        """Continue a suspended (or crashed) stored run with ``decision``.

        Returns once the run is under way; ``UserError`` for a bad decision or a cancelled
        run, ``RunLeaseError`` when another process drives it, `RunConflict` otherwise.
        """
        if self.store_of(record.run_id) is None:
            raise UserError("this server has no store: start it with --store to resume runs")
        if self.is_active(record.run_id):
            raise RunConflict(f"run {record.run_id!r} is running on this server")
        if self.registry.get(record.run_id) is None:
            raise RunConflict(f"run {record.run_id!r} cannot be resumed: {record.error}")
        if record.status in ("completed", "cancelled"):
            raise RunConflict(f"run {record.run_id!r} is {record.status}; it cannot be resumed")
        resumed = ResumedRun(self, record, decision)
        self._spawn(record.run_id, resumed.drive())
        try:
            await resumed.started
        except RunLeaseError:
            raise  # another process drives it: nothing is wrong with the run
        except StoreError as error:  # damaged, or stopped before its first checkpoint
            await self.fail_unresumable(record, error)
            raise RunConflict(f"run {record.run_id!r} cannot be resumed: {error}") from None
        return record

    async def fail_unresumable(self, record: RunRecord, error: StoreError) -> None:
        """Show a run whose resume the store refused as ``failed``, with the store's reason.

        The store itself is left as it is (a run never checkpointed is marked failed there
        by the resume): the error may be passing, and a later resume may then succeed.
        """
        await self.end_run(record, "failed", str(error), type(error).__name__)

    async def end_run(
        self, record: RunRecord, status: RunStatus, message: str, error_type: str
    ) -> None:
        """Close the run's log with a ``run_failed`` event (unless it has one) and its status."""
        if not record.events or record.events[-1].get("kind") != "run_failed":
            event = RunFailed(error=message, error_type=error_type)
            event.run_id, event.seq, event.time = record.run_id, record.last_seq + 1, time.time()
            await self.registry.append(record.run_id, event_to_dict(event))
        await self.registry.finish(record.run_id, status, error=f"{error_type}: {message}")
