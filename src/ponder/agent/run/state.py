"""`RunState`: everything one run knows, as plain data the VM snapshots.

The agent object holds configuration only; the ledger, counters, flags and the per-run
state of stateful tools live here, so a run can be written out and resumed elsewhere.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, model_validator

from ponder.agent.limits import UsageLimits
from ponder.agent.run.plan_state import ContextTracking, StepRunState
from ponder.events import CheckType, Verdict
from ponder.media import Attachment
from ponder.messages import Ledger, UserMessage
from ponder.models.base import Usage
from ponder.shared_fields import share_fields_set
from ponder.status import RunStatus, StopReason

__all__ = ["LedgerField", "RoundPhase", "RunState", "RunStatus"]

RoundPhase = Literal["", "reasoning", "action", "reflection"]
_EXTRA_KEYS = ("phase", "round_signature", "stop_result", "awaiting_approval")
"""Keys of the old ``extra`` mapping that are fields now (``reflection_detail`` was dropped:
nothing read it; a checkpoint that holds it loads without it)."""


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
    attachments: Annotated[
        tuple[Attachment, ...],
        PlainSerializer(lambda media: [m.model_dump(mode="json") for m in media], return_type=list),
    ] = ()
    """The images and files sent with the prompt."""
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
    reflection_verdicts: tuple[Verdict, ...] = ()
    """The verdicts of the current reflection (a run restored mid-reflection judges them)."""
    reflection_checks: dict[CheckType, tuple[Verdict, str]] = Field(default_factory=dict)
    """The current reflection round's verdict and detail per check."""
    phase: RoundPhase = ""
    """The request of the round in progress: a run resumed mid-round goes on from there."""
    round_signature: str = ""
    """The calls of the round in progress, for the loop guard."""
    stop_result: str = ""
    """What ``agent_stop`` reported."""
    awaiting_approval: tuple[str, ...] = ()
    """Ids of the calls the run is suspended on, waiting for a decision."""
    awaiting_input: tuple[dict[str, Any], ...] = ()
    """The MCP servers' questions the run is suspended on (see ``run.elicitation``)."""
    offered_tools: tuple[str, ...] | None = None
    """The tools the latest model request offered (None: not known, e.g. an older run)."""
    recipe: dict[str, Any] = Field(default_factory=dict)
    """How the agent was built (`Agent.recipe`), so the run can be resumed without flags."""
    external_tools: tuple[dict[str, Any], ...] = ()
    """Definitions of tools the caller answers (see ``ponder.tools.external``)."""
    text_replies: int = 0
    """Consecutive text replies in the acting phase before ``agent_stop`` (stop protocol)."""
    answer_retried: bool = False
    """The answer was asked for once more because the first one could not be used."""
    done: bool = False
    """The tool loop is over; the next step is the final answer (or none is needed)."""

    output: str | None = None
    stop_reason: StopReason | None = None
    limits: UsageLimits | None = None
    """The run's own bounds on requests, tokens and tool calls (``run(limits=...)``)."""
    output_schema: dict[str, Any] | None = None
    """The JSON schema the final answer must match (None: a plain text answer)."""
    structured: Any = None
    """The final answer as validated JSON, when the run has an ``output_schema``."""
    output_error: str | None = None
    """Why no valid structured answer was had (the retries were used up)."""
    output_attempts: int = 0
    """Structured answers asked for so far (bounded by ``structured_output_retries``)."""
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    """The run's model requests' price in USD, where the model's price is known."""
    tool_states: dict[str, Any] = Field(default_factory=dict)
    step: StepRunState = Field(default_factory=StepRunState)
    """The step-driven workflow's plan and per-step counters."""
    context: ContextTracking = Field(default_factory=ContextTracking)
    event_seq: int = 0

    def __setattr__(self, name: str, value: Any) -> None:
        """Store a field as it is: nodes assign fields over a hundred times a run.

        Assignments are not validated (as configured) and not added to
        ``model_fields_set`` (which keeps the fields given at construction): the set would
        grow to a 2 KB table in every run, and nothing reads it (snapshots exclude defaults).
        """
        if name in _FIELD_NAMES:
            self.__dict__[name] = value
        else:
            super().__setattr__(name, value)

    def model_post_init(self, context: Any, /) -> None:
        """Share the fields set: `__setattr__` never adds to it (see ``shared_fields``)."""
        share_fields_set(self)

    def prompt_message(self) -> UserMessage:
        """The user's message of this turn: the prompt and its images and files."""
        return UserMessage(content=self.prompt, attachments=self.attachments)

    @model_validator(mode="before")
    @classmethod
    def _from_extra(cls, data: Any) -> Any:
        """Read checkpoints written before ``extra``'s keys became fields."""
        if isinstance(data, dict) and isinstance(data.get("extra"), dict):
            data = dict(data)
            extra = data.pop("extra")
            data.update({k: extra[k] for k in _EXTRA_KEYS if k in extra and k not in data})
        return data


_FIELD_NAMES = frozenset(RunState.model_fields)
"""What `RunState.__setattr__` stores directly (no assignment validation, as configured)."""
