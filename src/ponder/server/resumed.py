"""One resume of a stored run on the server: its events reach the registry once it is under way.

`RunConflict` is what the server answers 409 with: a run that is running here already, or
that cannot be resumed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ponder.events import Event, RunFinished, event_to_dict
from ponder.server.runs import RunRecord

if TYPE_CHECKING:
    from ponder.server.local_launcher import RunLauncher

__all__ = ["ResumedRun", "RunConflict"]


class RunConflict(Exception):
    """The run is not in a state that allows the request (answered with 409)."""


class ResumedRun:
    """One resume of a stored run, whose events reach the registry through an agent hook.

    Events are held back until the run makes progress past ``run_resumed``, so a resume
    refused by the store (the lease) leaves the record as it was; ``started`` resolves
    then, or with the refusal.
    """

    def __init__(self, launcher: RunLauncher, record: RunRecord, decision: Any) -> None:
        self.launcher, self.record, self.decision = launcher, record, decision
        self.started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._held: list[dict[str, Any]] = []
        self.output: str | None = None
        """The answer, once the run said it finished (a stop after that keeps it finished)."""

    async def _on_event(self, event: Event) -> None:
        if event.run_id != self.record.run_id:
            return
        if isinstance(event, RunFinished):
            self.output = event.output
        self._held.append(event_to_dict(event))
        if event.kind == "run_resumed" and not self.started.done():
            return
        await self._release()

    async def _release(self) -> None:
        held, self._held = self._held, []
        for event in held:
            await self.launcher.registry.append(self.record.run_id, event)
        if not self.started.done():
            self.started.set_result(None)

    async def drive(self) -> None:
        """Run the resume to its next end; failures after the start close the log."""
        agent, run_id = self.launcher.agent_of(self.record.run_id), self.record.run_id
        hook = agent.on_event("*")(self._on_event)
        try:
            store = self.launcher.store_of(run_id)
            output = self.launcher.output_of(run_id)
            result = await agent.resume(run_id, self.decision, store=store, output_type=output)
            await self._release()
        except asyncio.CancelledError:
            if not self.started.done():
                self.started.set_exception(RunConflict("the server is shutting down"))
                raise
            if run_id in self.launcher.interrupting:
                await self._release()
                if self.output is not None:  # stopped after it said it finished: stored so
                    self.launcher.interrupting.discard(run_id)
                    await self.launcher.registry.finish(run_id, "completed", output=self.output)
                    return
                await self.launcher.record_interrupted(self.record)
                return
            await self.launcher.end_run(
                self.record, "cancelled", "cancelled by request", "Cancelled"
            )
            raise
        except Exception as error:
            if not self.started.done():
                self.started.set_exception(error)
                return
            await self.launcher.end_run(self.record, "failed", str(error), type(error).__name__)
            return
        finally:
            agent.hooks.remove(hook)
            self.launcher.forget_agent(self.record)
        if result.status == "completed":
            await self.launcher.registry.finish(run_id, "completed", output=result.text)
