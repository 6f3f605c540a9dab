"""`RunState`: everything one run knows, as plain data the VM snapshots.

The agent object holds configuration only; the ledger, counters, flags and the per-run
state of stateful tools live here, so a run can be written out and resumed elsewhere.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from ponder.agent.strategies.step_react.state import ContextTracking, StepRunState
from ponder.messages import Ledger
from ponder.models.base import Usage

__all__ = ["LedgerField", "RunState", "RunStatus"]

RunStatus = Literal["running", "completed", "suspended", "failed", "cancelled"]


def _to_ledger(value: Any) -> Ledger:
    return value if isinstance(value, Ledger) else Ledger.from_json(value)


LedgerField = Annotated[
    Ledger,
    PlainValidator(_to_ledger),
    PlainSerializer(lambda ledger: ledger.to_json(), return_type=list),
]


class RunState(BaseModel):
    """The state of one run. Mutated by the workflow's nodes; serialisable at any boundary."""

    model_config = ConfigDict(arbitrary_types_allowed=True, validate_assignment=False)

    run_id: str
    session_id: str | None = None
    prompt: str = ""
    ledger: LedgerField = Field(default_factory=Ledger, exclude=True)
    """Stored beside the snapshot, message by message (see ``ponder.store``)."""
    status: RunStatus = "running"

    rounds: int = 0
    """Tool rounds completed (``agent_tool_call_limit`` counts these)."""
    tool_calls: int = 0
    """Action tool calls executed (``agent_max_tool_calls`` counts these)."""
    suggested_stop: bool = False
    reasoning_pc: int = 0
    """Consecutive rounds that repeated the previous round's reasoning or calls."""
    last_step: str = ""
    last_summary: str = ""
    loop_summary: str = ""
    last_signature: str = ""
    loop_corrected: str | None = None
    reflection_attempts: int = 0
    offered_tools: list[str] | None = None
    """The tools the latest model request offered (None: not known, e.g. an older run)."""
    text_replies: int = 0
    """Consecutive text replies in the acting phase before ``agent_stop`` (stop protocol)."""
    empty_replies: int = 0
    """Consecutive empty replies in the acting phase."""
    answer_retried: bool = False
    """The answer was asked for once more because the first one could not be used."""
    done: bool = False
    """The tool loop is over; the next step is the final answer (or none is needed)."""

    output: str | None = None
    stop_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    tool_states: dict[str, Any] = Field(default_factory=dict)
    step: StepRunState = Field(default_factory=StepRunState)
    """The step-driven workflow's plan and per-step counters."""
    context: ContextTracking = Field(default_factory=ContextTracking)
    event_seq: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)
