"""The OpenAI chat-completions wire format: ledger → request body, response → ledger parts.

Pure functions and one stream assembler; no SDK import, so they are cheap to test and the
adapter module stays fast to import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from ponder.exceptions import ModelResponseError, UserError
from ponder.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.models.base import (
    ForceTool,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
    Usage,
)
from ponder.models.capabilities import Capabilities
from ponder.models.structured import is_strict_schema, output_tool, tool_name
from ponder.models.wire_fields import (
    arguments_text,
    call_id,
    call_name,
    count,
    get,
    items,
    label,
    new_call_id,
    text_or_none,
    unreadable,
)

__all__ = [
    "StreamAssembler",
    "deltas_of",
    "request_body",
    "response_from_message",
    "usage_from",
    "with_unique_ids",
    "without_lengths",
]


def request_body(
    request: ModelRequest, caps: Capabilities, *, json_object: bool = False
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` (without model and stream).

    ``request`` is already adapted (see `ponder.models.degrade.adapt`); ``caps`` decides
    the wire shapes: ``content: null`` or ``""``, ``role: tool`` or user messages,
    ``response_format`` or a forced output tool.
    """
    tools = list(request.tools)
    choice = request.tool_choice
    body: dict[str, Any] = {"messages": [to_wire(m, caps) for m in request.messages]}
    if json_object:
        body["response_format"] = {"type": "json_object"}
    if request.output is not None:
        if caps.json_schema_output:
            body["response_format"] = _response_format(request)
        else:
            tools.append(output_tool(request.output))
            choice = ForceTool(tool_name(request.output.name))
    if tools:
        body["tools"] = [_tool(t, caps) for t in tools]
        body["tool_choice"] = _tool_choice(choice, tools)
    settings = request.settings
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.extra_body:
        body["extra_body"] = settings.extra_body
    return body


def to_wire(message: Message, caps: Capabilities) -> dict[str, Any]:
    """One ledger message as an OpenAI chat message."""
    match message:
        case SystemMessage():
            return {"role": "system", "content": message.content}
        case UserMessage():
            user: dict[str, Any] = {"role": "user", "content": message.content}
            if message.name:
                user["name"] = message.name
            return user
        case AssistantMessage():
            return _assistant(message, caps)
        case ToolMessage():
            if not caps.tool_role:
                text = f"Result of the tool call {message.name} ({message.call_id}):\n"
                return {"role": "user", "content": text + message.content}
            return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
        case _:
            assert_never(message)


def _assistant(message: AssistantMessage, caps: Capabilities) -> dict[str, Any]:
    calls = message.tool_calls
    empty = None if calls and caps.null_content else ""
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or empty}
    if calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    if caps.replays_reasoning and message.reasoning:
        wire["reasoning_content"] = message.reasoning
    return wire


def _tool(tool: ToolDefinition, caps: Capabilities) -> dict[str, Any]:
    parameters = tool.parameters if caps.length_limits else without_lengths(tool.parameters)
    function: dict[str, Any] = {"name": tool.name, "parameters": parameters}
    if tool.description:
        function["description"] = tool.description
    if tool.strict and is_strict_schema(tool.parameters):
        function["strict"] = True
    return {"type": "function", "function": function}


def without_lengths(schema: Any) -> Any:
    """``schema`` without ``maxLength`` / ``minLength`` anywhere (ponder still checks them)."""
    if isinstance(schema, dict):
        return {
            k: without_lengths(v) for k, v in schema.items() if k not in ("maxLength", "minLength")
        }
    if isinstance(schema, list):
        return [without_lengths(v) for v in schema]
    return schema


def _tool_choice(choice: Any, tools: Sequence[ToolDefinition]) -> Any:
    if not isinstance(choice, ForceTool):
        return choice
    names = [t.name for t in tools]
    if choice.name not in names:
        raise UserError(f"tool_choice forces tool {choice.name!r}, which is not among {names}")
    return {"type": "function", "function": {"name": choice.name}}


def _response_format(request: ModelRequest) -> dict[str, Any]:
    assert request.output is not None
    schema = request.output
    spec: dict[str, Any] = {"name": tool_name(schema.name), "schema": schema.json_schema}
    if schema.description:
        spec["description"] = schema.description
    spec["strict"] = schema.strict and is_strict_schema(schema.json_schema)
    return {"type": "json_schema", "json_schema": spec}


def usage_from(raw: Any) -> Usage:
    """Provider-reported usage (``None`` → an empty usage for one request)."""
    if raw is None:
        return Usage(requests=1)
    details = get(raw, "completion_tokens_details")
    return Usage(
        requests=1,
        input_tokens=count(get(raw, "prompt_tokens")),
        output_tokens=count(get(raw, "completion_tokens")),
        reasoning_tokens=count(get(details, "reasoning_tokens")),
    )


def response_from_message(completion: Any, provider: str) -> ModelResponse:
    """A `ModelResponse` from a non-streamed ``ChatCompletion``.

    `ModelResponseError` if it cannot be read; a call's odd fields stay that call's problem.
    """
    if completion is None or isinstance(completion, str | bytes | list | int | float):
        shown = repr(completion)[:120]
        raise unreadable(f"the body is {shown}, not a chat completion")
    model_name = label(get(completion, "model"))
    choices = items(get(completion, "choices"), "choices")
    reported = get(completion, "error")
    if not choices and reported is not None:
        raise unreadable(f"it reported an error instead: {str(reported)[:200]}", model_name)
    if not choices:
        raise ModelResponseError("the provider returned no choices", model_name=model_name)
    choice = choices[0]
    message = get(choice, "message")
    if message is None:
        raise unreadable("the first choice has no message", model_name)
    parts: list[AssistantPart] = []
    reasoning = text_or_none(get(message, "reasoning_content"), "reasoning_content")
    if reasoning:
        parts.append(ReasoningPart(text=reasoning, provider=provider))
    content = text_or_none(get(message, "content"), "the message content")
    if content:
        parts.append(TextPart(text=content))
    parts += [_call_part(call) for call in items(get(message, "tool_calls"), "tool_calls")]
    return ModelResponse(
        parts=tuple(parts),
        usage=usage_from(get(completion, "usage")),
        finish_reason=label(get(choice, "finish_reason")),
        model_name=model_name,
    )


def _call_part(call: Any) -> ToolCallPart:
    """One call of a completion; a ``custom`` call's input is read as its arguments."""
    function = get(call, "function")
    custom = get(call, "custom")
    if function is None and custom is not None:
        name, arguments = get(custom, "name"), get(custom, "input")
    else:
        name, arguments = get(function, "name"), get(function, "arguments")
    return ToolCallPart.from_raw(
        call_id(get(call, "id")), call_name(name), arguments_text(arguments)
    )


def deltas_of(response: ModelResponse) -> list[ModelDelta]:
    """The deltas a whole response would have streamed (for providers that cannot stream)."""
    deltas: list[ModelDelta] = []
    if response.reasoning:
        deltas.append(ReasoningDelta(response.reasoning))
    if response.text:
        deltas.append(TextDelta(response.text))
    for index, call in enumerate(response.tool_calls):
        deltas.append(ToolCallDelta(index, id=call.id, name=call.name, arguments=call.arguments))
    return deltas


def with_unique_ids(response: ModelResponse, history: Sequence[Message]) -> ModelResponse:
    """``response`` with call ids the history already holds (or it repeats) replaced."""
    seen = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    parts: list[AssistantPart] = []
    changed = False
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            if part.id in seen:
                part, changed = part.model_copy(update={"id": _new_id()}), True
            seen.add(part.id)
        parts.append(part)
    return response.model_copy(update={"parts": tuple(parts)}) if changed else response


def _new_id() -> str:
    return new_call_id()


@dataclass
class _CallBuffer:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    """Folds ``ChatCompletionChunk`` objects into deltas and, at the end, one response.

    Tool-call fragments are assembled by ``index``, so several parallel calls may
    interleave. `finish` refuses a stream that never said why it stopped.
    """

    provider: str
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _CallBuffer] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    model_name: str | None = None

    def feed(self, chunk: Any) -> list[ModelDelta]:
        """Take one chunk; return the deltas it carries (`ModelResponseError` if unreadable)."""
        if chunk is None or isinstance(chunk, str | bytes | list | int | float):
            raise unreadable(f"a stream chunk is {repr(chunk)[:120]}", self.model_name)
        self.model_name = label(get(chunk, "model")) or self.model_name
        usage = get(chunk, "usage")
        if usage is not None:
            self.usage = usage_from(usage)
        choices = items(get(chunk, "choices"), "a chunk's choices")
        if not choices:
            return []
        choice = choices[0]
        reason = label(get(choice, "finish_reason"))
        if reason:
            self.finish_reason = reason
        delta = get(choice, "delta")
        return [] if delta is None else self._deltas(delta)

    def _deltas(self, delta: Any) -> list[ModelDelta]:
        out: list[ModelDelta] = []
        reasoning = text_or_none(get(delta, "reasoning_content"), "reasoning_content")
        if reasoning:
            self.reasoning.append(reasoning)
            out.append(ReasoningDelta(reasoning))
        content = text_or_none(get(delta, "content"), "a chunk's content")
        if content:
            self.text.append(content)
            out.append(TextDelta(content))
        for fragment in items(get(delta, "tool_calls"), "a chunk's tool_calls"):
            out.append(self._call_fragment(fragment))
        return out

    def _call_fragment(self, fragment: Any) -> ToolCallDelta:
        index = self._index(fragment)
        buffer = self.calls.setdefault(index, _CallBuffer())
        function = get(fragment, "function") or get(fragment, "custom")
        raw_name = get(function, "name")
        name = call_name(raw_name) if raw_name is not None else None
        raw_arguments = get(function, "arguments")
        if raw_arguments is None:
            raw_arguments = get(function, "input")
        arguments = arguments_text(raw_arguments)
        if name and name == buffer.name:  # some servers repeat the name in every chunk
            name = None
        raw_id = get(fragment, "id")
        fragment_id = call_id(raw_id) if raw_id is not None else None
        new_id = fragment_id if fragment_id and fragment_id != buffer.id else None
        buffer.id = buffer.id or fragment_id
        buffer.name += name or ""
        buffer.arguments.append(arguments)
        return ToolCallDelta(index, id=new_id, name=name, arguments=arguments)

    def _index(self, fragment: Any) -> int:
        """The fragment's call index; without one, a new call if it brings a new id."""
        index = get(fragment, "index")
        if index is None:
            if not self.calls:
                return 0
            last = max(self.calls)
            raw_id = get(fragment, "id")
            is_new = raw_id is not None and call_id(raw_id) != self.calls[last].id
            return last + 1 if is_new else last
        if not isinstance(index, int) or isinstance(index, bool):
            raise unreadable(f"a tool call fragment has index {index!r}", self.model_name)
        return index

    def finish(self) -> ModelResponse:
        """The complete response; `ModelResponseError` if the stream was cut short."""
        if self.finish_reason is None:
            raise ModelResponseError(
                "the stream ended before the provider finished the response",
                model_name=self.model_name,
            )
        parts: list[AssistantPart] = []
        if self.reasoning:
            parts.append(ReasoningPart(text="".join(self.reasoning), provider=self.provider))
        if self.text:
            parts.append(TextPart(text="".join(self.text)))
        for _, buffer in sorted(self.calls.items()):
            arguments = "".join(buffer.arguments)
            parts.append(ToolCallPart.from_raw(buffer.id or _new_id(), buffer.name, arguments))
        return ModelResponse(
            parts=tuple(parts),
            usage=self.usage or Usage(requests=1),
            finish_reason=self.finish_reason,
            model_name=self.model_name,
        )
