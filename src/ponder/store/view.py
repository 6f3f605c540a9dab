"""A stored run's checkpoint as typed data: `CheckpointView`, parsed once from its header.

The header is JSON that ponder wrote (see `ponder.store.base`), but a store can be changed
by something else; `CheckpointView.parse` checks every field the runtime, the server and the
CLI read and turns a bad one into a `StoreError` naming the run and the field. Nothing else
picks a header apart. `pending_calls` and `pending_questions` read a suspension's payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator

from ponder.exceptions import StoreError
from ponder.status import RUN_STATUSES, RunStatus, StopReason, SuspensionReason

__all__ = ["CheckpointView", "Suspension", "pending_calls", "pending_questions"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_ELSEWHERE = "; the store was changed by something other than ponder"


@dataclass(frozen=True, slots=True)
class Suspension:
    """Why a suspended run waits, and what for (the calls to approve, the questions)."""

    reason: SuspensionReason
    payload: Any = None

    def to_dict(self) -> dict[str, Any]:
        """``{"reason", "payload"}``, as the server and ``ponder runs show --json`` give it."""
        return {"reason": self.reason, "payload": self.payload}

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The tool calls an approval waits on (``[]`` for another reason)."""
        return pending_calls(self.to_dict())

    @property
    def questions(self) -> list[dict[str, Any]]:
        """The MCP servers' questions an elicitation waits on (``[]`` for another reason)."""
        return pending_questions(self.to_dict())


@dataclass(frozen=True, slots=True)
class CheckpointView:
    """What a stored run's checkpoint says, typed; the defaults are those of a run without one.

    Built by `parse` (a store hands it out as `ponder.store.StoredRun.view`).
    """

    run_id: str
    status: RunStatus
    """The run row's status (``cancelled`` by request, else the last checkpoint's)."""
    has_checkpoint: bool = False
    """False for a run whose process died between taking the lease and checkpointing."""
    suspension: Suspension | None = None
    """Set for a ``suspended`` run only."""
    output: str | None = None
    stop_reason: StopReason | None = None
    is_typed: bool = False
    """The run answers with structured output (it has an output schema)."""
    usage: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    """The run's `ponder.models.Usage` fields that are not zero."""
    recipe: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """How the run's agent was built (``Agent.recipe``; empty for a run stored before them)."""
    tool_states: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """The stateful tools' states by tool name, as JSON (validated by the tool on use)."""
    event_seq: int = 0
    """The ``seq`` of the run's last event."""
    ledger_generation: int = 0
    """How many times the ledger was replaced (compaction)."""
    ledger_keys: str | None = None
    """How the run's effect rows are keyed (None: by bare call id, an older run)."""
    session_id: str | None = None
    """The session the run is a turn of, if any."""

    @property
    def pending_calls(self) -> list[dict[str, Any]]:
        """The tool calls the run waits to have approved (``[]`` unless it does)."""
        return [] if self.suspension is None else self.suspension.calls

    @property
    def pending_questions(self) -> list[dict[str, Any]]:
        """The MCP servers' questions the run waits to have answered (``[]`` unless it does)."""
        return [] if self.suspension is None else self.suspension.questions

    @classmethod
    def parse(cls, run_id: str, status: str, header: Any) -> CheckpointView:
        """The view of one stored run; `StoreError` naming the run and the field if bad.

        ``header`` is the checkpoint header as stored (``{}``: the run has no checkpoint).
        """
        known = _run_status(run_id, status)
        if header == {}:
            return cls(run_id, known)
        try:
            found = _Header.model_validate(header)
        except ValidationError as exc:
            raise _shape_error(run_id, exc) from None
        state, ledger = found.vm.state, found.ledger
        return cls(
            run_id,
            known,
            has_checkpoint=True,
            suspension=_suspension(found.vm.suspension) if known == "suspended" else None,
            output=state.output,
            stop_reason=state.stop_reason or None,
            is_typed=state.output_schema is not None,
            usage=MappingProxyType(state.usage),
            recipe=MappingProxyType(state.recipe),
            tool_states=MappingProxyType(state.tool_states),
            event_seq=state.event_seq,
            ledger_generation=ledger.generation,
            ledger_keys=ledger.keys,
            session_id=state.session_id,
        )


def pending_calls(suspension: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The tool calls an approval suspension waits on (``id``, ``name``, ``arguments``).

    ``suspension`` is ``{"reason", "payload"}`` (`Suspension.to_dict`, or a live event's).
    """
    if not suspension or suspension.get("reason") != "approval":
        return []
    payload = suspension.get("payload")
    calls = payload.get("calls") if isinstance(payload, dict) else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def pending_questions(suspension: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The MCP servers' questions an elicitation suspension waits on."""
    if not suspension or suspension.get("reason") != "elicitation":
        return []
    payload = suspension.get("payload")
    found = payload.get("elicitations") if isinstance(payload, dict) else None
    return [q for q in found if isinstance(q, dict)] if isinstance(found, list) else []


class _State(BaseModel):
    """The fields of the header's ``RunState`` that are read without restoring the run."""

    model_config = ConfigDict(extra="ignore")

    output: StrictStr | None = None
    stop_reason: StopReason | None = None
    output_schema: dict[str, Any] | None = None
    usage: dict[str, StrictInt] = {}
    recipe: dict[str, Any] = {}
    tool_states: dict[str, Any] = {}
    event_seq: StrictInt = 0
    session_id: StrictStr | None = None

    @field_validator("stop_reason", mode="before")
    @classmethod
    def _no_reason(cls, value: Any) -> Any:
        return None if value == "" else value  # what a run that did not finish says


class _Snapshot(BaseModel):
    """The header's VM snapshot, as far as it is read here (the VM checks it on restore)."""

    model_config = ConfigDict(extra="ignore")

    state: _State = _State()
    suspension: tuple[SuspensionReason, Any] | None = None


class _Ledger(BaseModel):
    model_config = ConfigDict(extra="ignore")

    generation: StrictInt = 0
    keys: StrictStr | None = None


class _Header(BaseModel):
    model_config = ConfigDict(extra="ignore")

    vm: _Snapshot
    ledger: _Ledger = _Ledger()


def _run_status(run_id: str, status: str) -> RunStatus:
    """The stored status as one of `ponder.status.RUN_STATUSES`; `StoreError` otherwise."""
    for known in RUN_STATUSES:
        if status == known:
            return known
    if not status:
        raise StoreError(f"run {run_id!r}: the stored run has no status{_ELSEWHERE}")
    raise StoreError(
        f"run {run_id!r}: the stored status {status!r} is not one of "
        f"{', '.join(RUN_STATUSES)}{_ELSEWHERE}"
    )


def _suspension(found: tuple[SuspensionReason, Any] | None) -> Suspension | None:
    return None if found is None else Suspension(found[0], found[1])


def _shape_error(run_id: str, exc: ValidationError) -> StoreError:
    """A `StoreError` naming the first bad field of the header (``vm.state.usage``...)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the header"
    problem = first["msg"][:1].lower() + first["msg"][1:]
    if first["type"] in ("model_type", "dict_type"):
        problem = "should be a JSON object"  # not pydantic's "or instance of _State"
    if first["type"] != "missing":
        found = first.get("input")
        shown = type(found).__name__ if isinstance(found, dict | list) else repr(found)[:80]
        problem += f", found {shown}"
    return StoreError(
        f"run {run_id!r}: the stored checkpoint has the wrong shape at {where} ({problem})"
        f"{_ELSEWHERE}"
    )
