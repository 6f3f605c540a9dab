"""`TemporalAgent`'s verbs named as `Agent`'s: ``stream``, ``resume`` and the sync forms.

A run on Temporal is started, followed and decided through the workflow; these verbs put
those steps together the way an `Agent` user expects: ``stream`` starts a run and yields
its events until it ends or suspends, ``resume`` hands a suspended run its decision and
waits for the next outcome, and ``run_sync``/``resume_sync``/``stream_sync`` do the same
from synchronous code (on this thread's own event loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Protocol

from ponder.agent.launch import Prompt
from ponder.agent.limits import UsageLimits
from ponder.agent.result import RunResult
from ponder.agent.sync import iterate_sync, run_coroutine_sync
from ponder.events import Event
from ponder.messages import Message

__all__ = ["TemporalVerbs"]


class _Client(Protocol):
    async def start(
        self,
        prompt: Prompt,
        *,
        run_id: str | None = None,
        message_history: Sequence[Message] = (),
        session_id: str | None = None,
        limits: UsageLimits | None = None,
    ) -> str: ...

    async def result(self, run_id: str, *, poll: float = 0.1) -> RunResult: ...

    async def decide(self, run_id: str, decision: Any) -> bool: ...

    def follow(self, run_id: str, *, after: int = 0, poll: float = 0.2) -> AsyncIterator[Event]: ...


class TemporalVerbs:
    """``stream``, ``resume`` and the sync verbs, on top of start, follow, decide and result."""

    async def run(self: _Client, prompt: Prompt, **options: Any) -> RunResult:
        """Start a run and wait until it completes or waits for a decision."""
        return await self.result(await self.start(prompt, **options))

    async def stream(self: _Client, prompt: Prompt, **options: Any) -> AsyncIterator[Event]:
        """Start a run and yield its events until it ends or suspends (see ``result``)."""
        run_id = await self.start(prompt, **options)
        async for event in self.follow(run_id):
            yield event

    async def resume(self: _Client, run_id: str, decision: Any) -> RunResult:
        """Hand a suspended run its ``decision`` and wait for its next outcome."""
        await self.decide(run_id, decision)
        return await self.result(run_id)

    def run_sync(self: _Client, prompt: Prompt, **options: Any) -> RunResult:
        """`run` from synchronous code."""
        return run_coroutine_sync(TemporalVerbs.run(self, prompt, **options), "run_sync")

    def resume_sync(self: _Client, run_id: str, decision: Any) -> RunResult:
        """`resume` from synchronous code."""
        return run_coroutine_sync(TemporalVerbs.resume(self, run_id, decision), "resume_sync")

    def stream_sync(self: _Client, prompt: Prompt, **options: Any) -> Iterator[Event]:
        """`stream` from synchronous code: the events, one by one."""
        return iterate_sync(TemporalVerbs.stream(self, prompt, **options), "stream_sync")
