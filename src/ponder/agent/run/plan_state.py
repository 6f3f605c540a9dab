"""The plain data of the step-driven workflow and of context management, kept in `RunState`.

Everything here is a pydantic model of JSON-able fields, so a run snapshotted at any node
boundary of the step loop resumes in another process with its plan, step counters, stall
record and summaries intact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer

from ponder.events import StepEnd
from ponder.messages import ToolCallPart
from ponder.shared_fields import SharedFieldsModel

__all__ = ["ContextTracking", "PlanStep", "StepEnd", "StepRunState", "StepStatus"]

StepStatus = Literal["pending", "running", "done", "skipped"]


def _pairs(value: Any) -> Any:
    return tuple(value.items()) if isinstance(value, dict) else value


Counts = Annotated[
    tuple[tuple[str, int], ...],
    BeforeValidator(_pairs),
    PlainSerializer(dict, return_type=dict[str, int]),
]
"""Counts by key as pairs, read and written as a JSON object."""


class PlanStep(BaseModel):
    """One node of the plan: what to do, what it waits for, and what came of it."""

    id: str
    description: str
    depends_on: list[str] = Field(default_factory=list)
    status: StepStatus = "pending"
    summary: str = ""
    outputs: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class StepRunState(SharedFieldsModel):
    """The step loop's state: the plan, the current step, and its per-step counters."""

    plan: Sequence[PlanStep] = ()
    """Replaced whole, never changed in place (a run without a plan keeps no list)."""
    simple_mode: bool = False
    revision: int = 0
    current_id: str | None = None
    step_number: int = 0
    """Steps started so far (1 for the first step)."""
    iterations: int = 0
    """Rounds run in the current step (``step_iteration_limit`` counts these)."""
    input_tokens_at_start: int = 0
    """``usage.input_tokens`` when the current step began (the step's token budget)."""
    ledger_start: int = 0
    """Where the current step's messages begin in the ledger."""
    end: StepEnd | None = None
    """Why the current step ends; ``None`` while it goes on."""
    stop_result: str = ""
    signatures: Counts = ()
    """``(call(args)=result-digest, times seen)`` in the current step (a JSON object on disk).

    Pairs of atomic values: a run's step state then holds nothing the collector tracks."""
    stall_signature: str = ""
    """The signature a correction was injected for (empty: no correction yet)."""
    stall_replans: int = 0
    update_step_exposed: bool = False
    injected_status: str = ""
    """The last plan status injected into the context (changes are detected against it)."""
    round_calls: tuple[ToolCallPart, ...] = ()
    """The calls of the current step's round in progress, for stall detection."""
    steps_begin: int | None = None
    """Ledger index where the first step's messages begin (step compaction replaces from here)."""


class ContextTracking(SharedFieldsModel):
    """An incremental estimate of the ledger's prompt size, so checks stay O(new messages).

    Assignments store the value as it is, like `RunState`'s: they are ponder's own ints,
    and the shared fields set stays shared (one set fewer in every waiting run).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        """Store a field as it is (see the class)."""
        if name in _TRACKING_FIELDS:
            self.__dict__[name] = value
        else:
            super().__setattr__(name, value)

    estimated_tokens: int = 0
    estimated_upto: int = 0
    window: int = 0
    """The model's context window as its provider stated it in this run (0: not stated)."""
    overhead: int = 0
    """Prompt tokens the estimate misses (tool schemas, the chat template), from that error."""


_TRACKING_FIELDS = frozenset(ContextTracking.model_fields)
