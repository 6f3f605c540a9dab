"""`RunView`: what a run looks like so far, folded from its event stream.

The view is plain data and knows nothing about terminals: ``apply(event)`` updates it,
and `ponder.cli.render` draws it. Thoughts keep their branch and revision links so a
renderer can draw the sequential-thinking tree with superseded thoughts marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from ponder.cli.thoughts import ThoughtView, thought_from_data
from ponder.events import (
    AnswerWithdrawn,
    CheckpointWritten,
    Compaction,
    Event,
    LimitReached,
    LoopDetected,
    McpEvent,
    MiddleMessage,
    ModelDegraded,
    ModelFallback,
    ModelUnanswered,
    OutputPartial,
    OutputRejected,
    PlanReplanned,
    PlanUpdated,
    Reasoning,
    ReasoningDelta,
    Reflection,
    ReportRaised,
    Retrieval,
    RoundStarted,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    StallDetected,
    StepFinished,
    StepStarted,
    StructuredReasoning,
    SubAgentEvent,
    TextDelta,
    Thinking,
    Todo,
    ToolCallFailed,
    ToolCallFinished,
    ToolCallStarted,
    ToolPrediction,
    Usage,
)
from ponder.status import CallStatus, RunStatus

__all__ = ["CallStatus", "RunStatus", "RunView", "StepView", "ThoughtView", "ToolCallView"]


_MCP_SHOWN = {"connect_failed", "disconnected", "server_failed", "sampling", "elicitation"}


@dataclass(slots=True)
class ToolCallView:
    """One tool call: arguments, then its result or error and how long it took."""

    call_id: str
    name: str
    arguments: Any
    round: int
    status: CallStatus | Literal["running"] = "running"
    output: str = ""
    duration: float | None = None


@dataclass(slots=True)
class StepView:
    """One plan step of a step-driven workflow."""

    step_id: str
    description: str
    index: int
    total: int
    status: str = "running"
    summary: str = ""


@dataclass
class RunView:
    """Everything the live displays show about one run."""

    run_id: str = ""
    prompt: str = ""
    model: str = ""
    workflow: str = ""
    status: RunStatus = "running"
    round: int = 0
    summaries: list[tuple[int, str]] = field(default_factory=list)
    thoughts: list[ThoughtView] = field(default_factory=list)
    calls: dict[str, ToolCallView] = field(default_factory=dict)
    steps: list[StepView] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)
    reasoning_text: str = ""
    answer: str = ""
    stop_reason: str = ""
    error: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    events: int = 0

    def apply(self, event: Event) -> None:
        """Fold one event into the view; kinds the view does not show are only counted."""
        self.events += 1
        match event:
            case RunStarted() | RunResumed() | RunFinished() | RunFailed() | RunSuspended():
                self._lifecycle(event)
            case RunCancelled():
                self.status = "interrupted" if event.resumable else "cancelled"
            case ToolCallStarted() | ToolCallFinished() | ToolCallFailed():
                self._tool_call(event)
            case (
                RoundStarted() | Reasoning() | Thinking() | Todo() | StepStarted() | StepFinished()
            ):
                self._progress(event)
            case (
                MiddleMessage()
                | Reflection()
                | LimitReached()
                | LoopDetected()
                | StallDetected()
                | ModelDegraded()
                | ModelUnanswered()
                | PlanReplanned()
            ):
                self._notice(event)
            case TextDelta() | ReasoningDelta():
                self._delta(event)
            case Usage():
                self._usage(event)
            case (
                McpEvent()
                | OutputRejected()
                | ModelFallback()
                | SubAgentEvent()
                | AnswerWithdrawn()
            ):
                self._side_notice(event)
            case (
                StructuredReasoning()
                | ToolPrediction()
                | PlanUpdated()
                | Compaction()
                | Retrieval()
                | ReportRaised()
                | CheckpointWritten()
                | OutputPartial()
            ):
                pass
            case _:
                assert_never(event)

    @property
    def current_step(self) -> StepView | None:
        """The latest plan step, if the workflow has steps."""
        return self.steps[-1] if self.steps else None

    @property
    def thought_progress(self) -> tuple[int, int]:
        """(latest thought number, current total estimate), or (0, 0)."""
        if not self.thoughts:
            return 0, 0
        last = self.thoughts[-1]
        return last.number, last.total

    def main_line(self) -> list[ThoughtView]:
        """Thoughts outside any branch, in call order."""
        return [t for t in self.thoughts if not t.branch_id]

    def branch(self, branch_id: str) -> list[ThoughtView]:
        """The thoughts filed under ``branch_id``, in call order."""
        return [t for t in self.thoughts if t.branch_id == branch_id]

    def branch_ids(self) -> list[str]:
        """Branch ids in first-seen order."""
        seen: dict[str, None] = {}
        for thought in self.thoughts:
            if thought.branch_id:
                seen.setdefault(thought.branch_id, None)
        return list(seen)

    # event handlers -------------------------------------------------------------------

    def _lifecycle(
        self, event: RunStarted | RunResumed | RunFinished | RunFailed | RunSuspended
    ) -> None:
        match event:
            case RunStarted():
                self._started(event)
            case RunResumed():
                self._resumed(event)
            case RunFinished():
                self._finished(event)
            case RunFailed():
                self._failed(event)
            case RunSuspended():
                self._suspended(event)
            case _:
                assert_never(event)

    def _tool_call(self, event: ToolCallStarted | ToolCallFinished | ToolCallFailed) -> None:
        match event:
            case ToolCallStarted():
                self.calls[event.call_id] = ToolCallView(
                    event.call_id, event.name, event.arguments, self.round
                )
            case ToolCallFinished():
                call = self._call(event.call_id, event.name)
                call.status, call.output, call.duration = "ok", event.output, event.duration
            case ToolCallFailed():
                call = self._call(event.call_id, event.name)
                call.status = event.status
                call.output, call.duration = event.error, event.duration
            case _:
                assert_never(event)

    def _progress(
        self, event: RoundStarted | Reasoning | Thinking | Todo | StepStarted | StepFinished
    ) -> None:
        match event:
            case RoundStarted():
                self.round = event.round
            case Reasoning():
                self.summaries.append((event.round, event.summary))
            case Thinking():
                self.thoughts.append(thought_from_data(event.data))
                self._link_revision(self.thoughts[-1])
            case Todo():
                self.plan = dict(event.data)
            case StepStarted():
                self.steps.append(
                    StepView(event.step_id, event.description, event.index, event.total)
                )
            case StepFinished():
                self._step_finished(event)
            case _:
                assert_never(event)

    def _notice(
        self,
        event: MiddleMessage
        | Reflection
        | LimitReached
        | LoopDetected
        | StallDetected
        | ModelDegraded
        | ModelUnanswered
        | PlanReplanned,
    ) -> None:
        match event:
            case MiddleMessage():
                notice = f"message: {event.content}"
            case Reflection():
                detail = f" — {event.detail}" if event.detail else ""
                notice = f"verify {event.check_type}: {event.result}{detail}"
            case LimitReached():
                notice = f"limit reached: {event.limit} ({event.value})"
            case LoopDetected():
                notice = f"loop detected ({event.repeats} repeats): {event.action}"
            case StallDetected():
                notice = f"step {event.step_id} stalled ({event.repeats} repeats)"
            case PlanReplanned():
                replaced = ", ".join(event.replaced) or "none"
                notice = f"replanned ({event.trigger}; replaced: {replaced}): {event.reason}"
            case ModelDegraded():
                notice = f"model lacks {event.feature}: {event.action} ({event.source})"
            case ModelUnanswered():
                again = "asking once more" if event.retrying else "giving up"
                notice = f"model gave no answer ({event.reason}): {again}"
            case _:
                assert_never(event)
        self.notices.append(notice)

    def _side_notice(
        self, event: McpEvent | OutputRejected | ModelFallback | SubAgentEvent | AnswerWithdrawn
    ) -> None:
        if isinstance(event, AnswerWithdrawn):
            self.answer = ""  # what was shown of the answer is not the answer
            again = "asking again" if event.retrying else "kept what remained"
            self.notices.append(f"answer withdrawn ({event.reason}): {again}")
            return
        if isinstance(event, McpEvent):
            self._mcp(event)
            return
        if isinstance(event, SubAgentEvent):
            self._sub_agent(event)
            return
        if isinstance(event, OutputRejected):
            again = "asking again" if event.retrying else "giving up"
            notice = f"answer {event.attempt} did not validate ({event.problem}): {again}"
        else:
            notice = f"{event.failed} failed ({event.error}): {event.answered_by} answered"
        self.notices.append(notice)

    def _delta(self, event: TextDelta | ReasoningDelta) -> None:
        if isinstance(event, TextDelta):
            self.answer += event.text
        else:
            self.reasoning_text += event.text

    def _sub_agent(self, event: SubAgentEvent) -> None:
        """A sub-agent's tool calls and end show as notices under the parent's call."""
        inner = event.event
        kind = inner.get("kind")
        if kind == "tool_call_started":
            self.notices.append(f"{event.agent} › {inner.get('name')}")
        elif kind == "run_finished":
            self.notices.append(f"{event.agent} answered ({inner.get('stop_reason')})")

    def _mcp(self, event: McpEvent) -> None:
        """Failures, sampling, elicitation and warning-or-worse logs become notices."""
        data = event.data
        if event.type == "log" and data.get("level") not in ("debug", "info", "notice"):
            self.notices.append(f"mcp {event.server} {data.get('level')}: {data.get('data')}")
        elif event.type in _MCP_SHOWN:
            detail = data.get("error") or data.get("status", "")
            self.notices.append(f"mcp {event.server} {event.type}: {detail}")

    def _started(self, event: RunStarted) -> None:
        self.run_id, self.prompt = event.run_id, event.prompt
        self.model, self.workflow = event.model, event.workflow
        self.status, self.answer, self.error = "running", "", ""

    def _resumed(self, event: RunResumed) -> None:
        self.run_id, self.status = event.run_id, "running"
        self.notices.append(f"resumed at pc {event.pc}")

    def _usage(self, event: Usage) -> None:
        self.cost = event.cost
        self.usage = {
            "requests": event.requests,
            "input_tokens": event.input_tokens,
            "output_tokens": event.output_tokens,
            "cached_input_tokens": event.cached_input_tokens,
        }

    def _call(self, call_id: str, name: str) -> ToolCallView:
        if call_id not in self.calls:
            self.calls[call_id] = ToolCallView(call_id, name, None, self.round)
        return self.calls[call_id]

    def _link_revision(self, thought: ThoughtView) -> None:
        if thought.revises is None or thought.revision_type == "amend":
            return
        for earlier in reversed(self.thoughts[:-1]):
            if thought.supersedes is not None:
                found = earlier.seq == thought.supersedes
            else:
                found = earlier.number == thought.revises and earlier.superseded_by is None
            if found:
                earlier.superseded_by = thought.seq
                return

    def _step_finished(self, event: StepFinished) -> None:
        for step in reversed(self.steps):
            if step.step_id == event.step_id:
                step.status, step.summary = event.status, event.summary
                return

    def _finished(self, event: RunFinished) -> None:
        self.status, self.answer = "completed", event.output
        self.stop_reason, self.usage = event.stop_reason, dict(event.usage)
        self.cost = event.cost

    def _failed(self, event: RunFailed) -> None:
        self.status, self.error = "failed", f"{event.error_type}: {event.error}"

    def _suspended(self, event: RunSuspended) -> None:
        self.status = "suspended"
        self.notices.append(f"suspended: {event.reason}")
