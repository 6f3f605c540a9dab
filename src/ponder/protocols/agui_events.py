"""ponder's run events as AG-UI events (the official ``ag-ui-protocol`` models).

`AguiTranslator` turns one run's event dicts (as the server's registry holds them) into
AG-UI events: text messages, reasoning messages (``think_and_reason``,
``sequential_thinking``, model reasoning), tool calls and their results, steps, and
the run's shared state (the step plan, the thinking tree, the todo list) as a
``STATE_SNAPSHOT`` then ``STATE_DELTA`` JSON patches. How the run ends is the caller's
business (`run_end`): finished, finished with frontend tool calls pending, interrupted
for approval or a question, or an error.
"""

from __future__ import annotations

import json
from typing import Any

from ponder.extras import require

require("agui", "the AG-UI endpoint")

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ponder.server.openai_request import client_call_id
from ponder.server.runs import RunRecord
from ponder.store.view import pending_calls, pending_questions
from ponder.tools.thinking import TOOL_NAME as THINKING_TOOL
from ponder.tools.todo import TOOL_NAME as TODO_TOOL

__all__ = ["AguiTranslator", "interrupt_id", "split_interrupt_id"]

_REASONING_TOOLS = frozenset({"think_and_reason", THINKING_TOOL})
"""Tools whose calls reach the client as reasoning, not as tool calls."""
_STATE_TOOLS = frozenset({TODO_TOOL})
"""Tools whose calls reach the client as state."""


def interrupt_id(run_id: str, item_id: str) -> str:
    """The id of an interrupt for a pending call or question of ``run_id``."""
    return f"ponder:{run_id}:{item_id}"


def split_interrupt_id(text: str) -> tuple[str, str] | None:
    """``(run_id, item_id)`` of an id made by `interrupt_id`, else None."""
    prefix, _, rest = text.partition(":")
    run_id, _, item = rest.partition(":")
    return (run_id, item) if prefix == "ponder" and run_id and item else None


class AguiTranslator:
    """Translates one run's events, tracking the open message and the shared state."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self._text: str | None = None
        self._reasoning: str | None = None
        self._state: dict[str, Any] | None = None
        self._count = 0
        self._said = False
        self._steps: dict[str, str] = {}
        """The name of each step that started (its description)."""
        """Whether the answer's text went out (a resumed run's comes whole, at its end)."""

    def _new_id(self, kind: str, seq: Any) -> str:
        self._count += 1
        return f"{kind}-{self.run_id}-{seq}-{self._count}"

    def close_messages(self) -> list[BaseEvent]:
        """End the text or reasoning message that is open."""
        out: list[BaseEvent] = []
        if self._text is not None:
            out.append(TextMessageEndEvent(message_id=self._text))
            self._text = None
        if self._reasoning is not None:
            out.append(ReasoningMessageEndEvent(message_id=self._reasoning))
            out.append(ReasoningEndEvent(message_id=self._reasoning))
            self._reasoning = None
        return out

    def _text_piece(self, text: str, seq: Any) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self._reasoning is not None:
            out += self.close_messages()
        self._said = True
        if self._text is None:
            self._text = self._new_id("msg", seq)
            out.append(TextMessageStartEvent(message_id=self._text, role="assistant"))
        out.append(TextMessageContentEvent(message_id=self._text, delta=text))
        return out

    def _reasoning_piece(self, text: str, seq: Any) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self._text is not None:
            out += self.close_messages()
        if self._reasoning is None:
            self._reasoning = self._new_id("reasoning", seq)
            out.append(ReasoningStartEvent(message_id=self._reasoning))
            out.append(ReasoningMessageStartEvent(message_id=self._reasoning, role="reasoning"))
        out.append(ReasoningMessageContentEvent(message_id=self._reasoning, delta=text))
        return out

    def _set_state(self, key: str, value: Any) -> list[BaseEvent]:
        if self._state is None:
            self._state = {key: value}
            return [StateSnapshotEvent(snapshot=dict(self._state))]
        op = "replace" if key in self._state else "add"
        self._state[key] = value
        return [StateDeltaEvent(delta=[{"op": op, "path": f"/{key}", "value": value}])]

    def _thought(self, data: dict[str, Any]) -> list[BaseEvent]:
        thoughts = list((self._state or {}).get("thoughts", []))
        thoughts.append({k: v for k, v in data.items() if v is not None})
        return self._set_state("thoughts", thoughts)

    def translate(self, event: dict[str, Any]) -> list[BaseEvent]:
        """The AG-UI events for one ponder event (none for most bookkeeping events)."""
        kind = event.get("kind")
        if kind in ("text_delta", "reasoning_delta", "reasoning", "thinking"):
            return self._words(event)
        if kind == "todo":
            data = event.get("data") or {}
            return self._set_state("todos", {k: v for k, v in data.items() if k != "display_type"})
        if kind in ("plan_updated", "plan_replanned"):
            return self._set_state("plan", event.get("steps", []))
        if kind == "step_started":
            name = self._steps[str(event.get("step_id"))] = str(event.get("description"))
            return [*self.close_messages(), StepStartedEvent(step_name=name)]
        if kind == "step_finished":
            step = str(event.get("step_id"))
            name = self._steps.pop(step, step)
            return [*self.close_messages(), StepFinishedEvent(step_name=name)]
        if kind in ("tool_call_started", "tool_call_finished", "tool_call_failed"):
            return self._tool(event)
        return []

    def _words(self, event: dict[str, Any]) -> list[BaseEvent]:
        """Text or reasoning, as pieces of the open message of its kind."""
        kind, seq = event.get("kind"), event.get("seq")
        if kind == "text_delta":
            return self._text_piece(str(event.get("text", "")), seq) if event.get("text") else []
        if kind == "reasoning_delta":
            text = str(event.get("text", ""))
            return self._reasoning_piece(text, seq) if text else []
        if kind == "reasoning":
            return self._reasoning_piece(f"{event.get('summary', '')}\n", seq)
        data = event.get("data") or {}
        label = f"Thought {data.get('thought_number')}/{data.get('total_thoughts')}"
        said = self._reasoning_piece(f"{label}: {data.get('thought', '')}\n", seq)
        return said + self._thought(data)

    def _tool(self, event: dict[str, Any]) -> list[BaseEvent]:
        """A tool call's start or result (thinking and todo calls go out as reasoning, state)."""
        if event.get("name") in _REASONING_TOOLS | _STATE_TOOLS:
            return []
        call_id = str(event["call_id"])
        if event.get("kind") == "tool_call_started":
            return [*self.close_messages(), *self._call(event, call_id)]
        finished = event.get("kind") == "tool_call_finished"
        text = event.get("output") if finished else f"error: {event.get('error')}"
        result = ToolCallResultEvent(
            message_id=f"result-{call_id}", tool_call_id=call_id, content=str(text), role="tool"
        )
        return [result]

    def _call(self, call: dict[str, Any], call_id: str) -> list[BaseEvent]:
        arguments = call.get("arguments")
        text = (
            arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        )
        return [
            ToolCallStartEvent(tool_call_id=call_id, tool_call_name=str(call.get("name"))),
            ToolCallArgsEvent(tool_call_id=call_id, delta=text),
            ToolCallEndEvent(tool_call_id=call_id),
        ]

    def run_end(self, record: RunRecord) -> list[BaseEvent]:
        """The events that end this request's stream, from how the run stands."""
        out = self.close_messages()
        ids = {"thread_id": self.thread_id, "run_id": self.run_id}
        if record.status == "completed":
            if record.output and not self._said and not record.is_typed:
                out += [*self._text_piece(record.output, "end"), *self.close_messages()]
            result = record.output
            if record.is_typed and result:
                try:
                    result = json.loads(result)
                except ValueError:
                    pass
            return [
                *out,
                RunFinishedEvent(**ids, result=result, outcome=RunFinishedSuccessOutcome()),
            ]
        if record.status == "suspended":
            calls = pending_calls(record.suspension)
            if calls and all(c.get("external") for c in calls):
                pending = [client_call_id(record.run_id, str(c["id"])) for c in calls]
                for call, call_id in zip(calls, pending, strict=True):
                    out += self._call(call, call_id)
                outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=pending)
                return [*out, RunFinishedEvent(**ids, outcome=outcome)]
            interrupts = self._interrupts(record)
            return [
                *out,
                RunFinishedEvent(**ids, outcome=RunFinishedInterruptOutcome(interrupts=interrupts)),
            ]
        message = record.error or f"the run {record.status}"
        code = "cancelled" if record.status == "cancelled" else "run_failed"
        return [*out, RunErrorEvent(message=message, code=code)]

    def _interrupts(self, record: RunRecord) -> list[Interrupt]:
        found = [
            Interrupt(
                id=interrupt_id(record.run_id, str(call["id"])),
                reason="tool_approval",
                message=f"Approve the call of {call.get('name')}?",
                tool_call_id=str(call["id"]),
                response_schema={
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
                    "required": ["approved"],
                },
                metadata={"name": call.get("name"), "arguments": call.get("arguments")},
            )
            for call in pending_calls(record.suspension)
        ]
        found += [
            Interrupt(
                id=interrupt_id(record.run_id, str(question["id"])),
                reason="input_required",
                message=str(question.get("message", "")),
                response_schema=question.get("requested_schema") or question.get("schema"),
            )
            for question in pending_questions(record.suspension)
        ]
        return found
