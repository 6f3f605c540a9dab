"""`RunResult`: what a finished run returns, generic in the type of its answer."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, cast

from typing_extensions import TypeVar

from ponder.exceptions import StructuredOutputError
from ponder.status import RunStatus

if TYPE_CHECKING:
    from ponder.agent.output import OutputSpec
    from ponder.agent.run.state import RunState
    from ponder.messages import Message
    from ponder.models.base import Usage

__all__ = ["OutputT", "RunResult"]

OutputT = TypeVar("OutputT", default=str)
"""The type of a run's answer: ``str`` unless the run has an ``output_type``."""


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutputT]):
    """The answer, why the run stopped, the whole conversation, and the tokens used."""

    text: str
    """The answer as text (for a typed answer: its JSON)."""
    status: RunStatus
    stop_reason: str
    messages: list[Message]
    usage: Usage
    run_id: str
    rounds: int
    tool_calls: int
    suspension: dict[str, Any] | None = None
    """For a suspended run: ``{"reason": ..., "payload": ...}`` (resume it by ``run_id``)."""
    cost: float | None = None
    """The price of the run's model requests in USD; None when the model's price is unknown."""
    structured: Any = None
    """The typed answer, when the run has an output type and the answer validated."""
    output_error: str | None = None
    """Why a typed answer could not be had (stop reason ``invalid_output``)."""
    is_typed: bool = False

    @property
    def output(self) -> OutputT:
        """The answer: the text, or the value of the run's output type.

        Raises `StructuredOutputError` when the run's typed answer did not validate.
        """
        if not self.is_typed:
            return cast(OutputT, self.text)
        if self.structured is None and self.output_error is not None:
            raise StructuredOutputError(
                f"run {self.run_id}: no valid typed answer: {self.output_error}", raw=self.text
            )
        return cast(OutputT, self.structured)

    @classmethod
    def from_state(cls, state: RunState, spec: OutputSpec | None = None) -> RunResult[Any]:
        """The result recorded in a finished run's state (its answer typed by ``spec``)."""
        typed = spec is not None and state.output_schema is not None
        structured = None
        if typed and spec is not None and state.structured is not None:
            structured = spec.from_json(state.structured)
        error = state.output_error
        if typed and structured is None and error is None and state.status == "completed":
            error = "the run ended without an answer"
        return cls(
            text=state.output or "",
            status=state.status,
            stop_reason=state.stop_reason or "",
            messages=list(state.ledger.messages),
            usage=state.usage,
            run_id=state.run_id,
            rounds=state.rounds,
            tool_calls=state.tool_calls,
            structured=structured,
            output_error=error,
            is_typed=typed,
            cost=state.cost,
        )

    def suspended(self, reason: str, payload: Any) -> RunResult[OutputT]:
        """A copy of the result, marked as suspended for ``reason``."""
        return dataclasses.replace(
            self, status="suspended", suspension={"reason": reason, "payload": payload}
        )
