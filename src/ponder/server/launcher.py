"""Starting runs in the background, feeding their events to the registry, cancelling them."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence

from ponder.agent import Agent
from ponder.events import RunFailed, event_to_dict
from ponder.messages import Message
from ponder.server.runs import RunRecord, RunRegistry, RunStatus

__all__ = ["AgentSource", "RunLauncher"]

AgentSource = Agent | Callable[[], Agent]


class RunLauncher:
    """Runs agents as tasks on the server's event loop, one registry record per run."""

    def __init__(self, source: AgentSource, registry: RunRegistry) -> None:
        self._source = source
        self.registry = registry
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def agent(self) -> Agent:
        """The agent for a new run (the same one, or a fresh one from the factory)."""
        return self._source if isinstance(self._source, Agent) else self._source()

    def start(self, prompt: str, history: Sequence[Message] = ()) -> RunRecord:
        """Register and start a run; its events land in the registry as they happen."""
        run_id = uuid.uuid4().hex
        record = self.registry.create(run_id, prompt)
        task = asyncio.get_running_loop().create_task(self._drive(record, list(history)))
        self._tasks[run_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(run_id, None))
        return record

    def cancel(self, run_id: str) -> bool:
        """Ask a running run to stop; False when it is not running here."""
        task = self._tasks.get(run_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def wait(self, run_id: str) -> None:
        """Return when the run's task has ended."""
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def shutdown(self) -> None:
        """Cancel every running run and wait for them to record it."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _drive(self, record: RunRecord, history: list[Message]) -> None:
        registry, run_id = self.registry, record.run_id
        output: str | None = None
        try:
            agent = self.agent()
            async for event in agent.stream(record.prompt, message_history=history, run_id=run_id):
                await registry.append(run_id, event_to_dict(event))
                if event.kind == "run_finished":
                    output = getattr(event, "output", None)
        except asyncio.CancelledError:
            await self._end(record, "cancelled", "cancelled by request", "Cancelled")
            raise
        except Exception as error:
            await self._end(record, "failed", str(error), type(error).__name__)
            return
        await registry.finish(run_id, "completed", output=output)

    async def _end(
        self, record: RunRecord, status: RunStatus, message: str, error_type: str
    ) -> None:
        """Close the run's log with a ``run_failed`` event (unless it has one) and its status."""
        if not record.events or record.events[-1].get("kind") != "run_failed":
            event = RunFailed(error=message, error_type=error_type)
            event.run_id, event.seq, event.time = record.run_id, record.last_seq + 1, time.time()
            await self.registry.append(record.run_id, event_to_dict(event))
        await self.registry.finish(record.run_id, status, error=f"{error_type}: {message}")
