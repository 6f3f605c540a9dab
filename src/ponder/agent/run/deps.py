"""What the VM's nodes are given for one run, and what the run machinery needs of a strategy.

The run machinery (driver, checkpointer) knows a strategy only through `Strategy`: the
strategies package implements it (``AgentStrategy``) and imports the machinery, never the
other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ponder.agent.run.context import RunContext

__all__ = ["RunDeps", "Strategy", "StrategyType"]


class Strategy(Protocol):
    """One run's strategy, as the workflow nodes and the driver call it."""

    async def on_init(self) -> None:
        """Put the system prompt and the user's message into the ledger."""

    async def on_entry(self) -> None:
        """Prepare the turn (after the report guard and compaction)."""

    async def single_execute(self) -> bool:
        """One think–act round; True to go on."""

    async def after_round(self) -> None:
        """Count the round and check for loops."""

    async def run(self) -> None:
        """Take full control of the turn (strategies that are not round-based)."""

    async def on_post_process(self) -> None:
        """Make sure the turn has an answer."""

    async def on_exception(self, exc: BaseException) -> None:
        """The run failed with ``exc``."""


StrategyType = Callable[[RunContext], Strategy]
"""How the driver builds a run's strategy (a strategy class is one)."""

S = TypeVar("S", bound=Strategy)


@dataclass(frozen=True, slots=True, eq=False)
class RunDeps(Generic[S]):
    """The VM's ``deps`` for one run: the run's live side and its strategy."""

    run: RunContext
    strategy: S
