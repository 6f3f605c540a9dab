"""Continue-as-new: a long run goes on in a fresh workflow run, under the same workflow id.

A workflow's history grows with every step, and Temporal slows down and then refuses a
history past its limits. A run past its `HistoryBudget` therefore hands itself on, at a
point where nothing is in flight: after a node of its program with no tool call open, or
when it suspends for an approval. What it hands on (`Carried`) is what a store keeps for
a local resume — the VM snapshot with the `RunState` (usage, cost, event numbering,
pending approvals), the ledger — plus the events so far and the agent the run was
offered, so the next run neither prepares again nor shows a different event sequence.
The workflow id stays, so clients, ``ponder runs show/resume/cancel`` and a parent run
reach the latest run of the chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio import workflow

from ponder.exceptions import UserError
from ponder.vm import Interpreter

__all__ = ["CONTINUED", "Carried", "HistoryBudget"]

CONTINUED = "continued"
"""The run input's key holding what an earlier run of the chain handed on."""


@dataclass(frozen=True, slots=True)
class HistoryBudget:
    """When a run continues as new; the first limit reached counts.

    ``events``: history events in one workflow run; ``rounds``: tool rounds begun in one
    workflow run (one waiting for a decision has begun); ``follow_server``: when
    Temporal suggests it (its history limits).
    """

    events: int | None = None
    rounds: int | None = None
    follow_server: bool = True

    def __post_init__(self) -> None:
        for name in ("events", "rounds"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise UserError(f"HistoryBudget.{name} must be a positive whole number")

    def to_data(self) -> dict[str, Any]:
        """The budget as run input."""
        return {"events": self.events, "rounds": self.rounds, "follow_server": self.follow_server}

    @classmethod
    def from_data(cls, data: Any) -> HistoryBudget:
        """The budget in run input (None: the default, Temporal's suggestion)."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise UserError("history_budget must be a JSON object")
        return cls(data.get("events"), data.get("rounds"), bool(data.get("follow_server", True)))

    def is_spent(self, rounds: int) -> bool:
        """True when this workflow run (``rounds`` tool rounds begun) should hand on."""
        info = workflow.info()
        if self.follow_server and info.is_continue_as_new_suggested():
            return True
        if self.events is not None and info.get_current_history_length() >= self.events:
            return True
        return self.rounds is not None and rounds >= self.rounds


@dataclass(frozen=True, slots=True)
class Carried:
    """What a run hands to the next run of its chain (JSON data inside the run input)."""

    spec: dict[str, Any]
    """The ``ponder.prepare`` result: the agent, strategy and tools the run was offered."""
    snapshot: dict[str, Any]
    ledger: list[dict[str, Any]]
    generation: int
    events: list[dict[str, Any]]

    @classmethod
    def take(cls, spec: dict[str, Any], vm: Interpreter, events: list[dict[str, Any]]) -> Carried:
        """What ``vm``'s run hands on now (its state must be a `RunState`)."""
        ledger = vm.state.ledger
        return cls(spec, vm.snapshot(), ledger.to_json(), ledger.generation, list(events))

    def to_data(self) -> dict[str, Any]:
        """As run input (under `CONTINUED`)."""
        return {
            "spec": self.spec,
            "snapshot": self.snapshot,
            "ledger": self.ledger,
            "generation": self.generation,
            "events": self.events,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Carried:
        """From run input; a malformed one raises ``KeyError``, ``TypeError`` or ``ValueError``."""
        return cls(
            dict(data["spec"]),
            dict(data["snapshot"]),
            list(data["ledger"]),
            int(data["generation"]),
            list(data["events"]),
        )
