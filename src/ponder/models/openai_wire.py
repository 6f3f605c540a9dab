"""The OpenAI chat-completions wire format: ledger → request body.

Pure functions, no SDK import, so they are cheap to test and the adapter module stays fast
to import. Reading the answers back is ``ponder.models.openai_response`` (a completion) and
``ponder.models.openai_stream`` (streamed chunks); their names are re-exported here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, assert_never

from ponder.exceptions import UserError
from ponder.media import File, Image
from ponder.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from ponder.models.base import ForceTool, ModelRequest, ToolDefinition
from ponder.models.capabilities import STRING_CAP, Capabilities, string_cap
from ponder.models.openai_response import (
    deltas_of,
    response_from_message,
    usage_from,
    with_unique_ids,
)
from ponder.models.openai_stream import StreamAssembler
from ponder.models.structured import is_strict_schema, output_tool, tool_name

__all__ = [
    "StreamAssembler",
    "capped_lengths",
    "deltas_of",
    "prompt_cache_key",
    "request_body",
    "response_from_message",
    "usage_from",
    "with_unique_ids",
]


def request_body(
    request: ModelRequest,
    caps: Capabilities,
    *,
    json_object: bool = False,
    provider: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` (without model and stream).

    ``request`` is already adapted (see `ponder.models.degrade.adapt`); ``caps`` decides
    the wire shapes: ``content: null`` or ``""``, ``role: tool`` or user messages,
    ``response_format`` or a forced output tool. Reasoning is replayed only to the
    ``provider`` that made it (a fallback may have had another provider answer).
    """
    tools = list(request.tools or _prefix_tools(request, caps))
    choice = request.tool_choice
    body: dict[str, Any] = {"messages": wire_messages(request.messages, caps, provider)}
    if json_object:
        body["response_format"] = {"type": "json_object"}
    if request.output is not None:
        if caps.json_schema_output:
            body["response_format"] = _response_format(request)
        else:
            tools.append(output_tool(request.output))
            choice = ForceTool(tool_name(request.output.name))
    if tools:
        cap = string_cap(request.settings.max_tokens)
        body["tools"] = [_tool(t, caps, cap) for t in tools]
        body["tool_choice"] = _tool_choice(choice, tools)
    settings = request.settings
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.extra_body:
        body["extra_body"] = settings.extra_body
    return body


def _prefix_tools(request: ModelRequest, caps: Capabilities) -> Sequence[ToolDefinition]:
    """`ModelRequest.prefix_tools`, to a provider that obeys ``tool_choice: "none"``.

    One that does not obey a named choice may call them anyway: it gets none.
    """
    keep = request.tool_choice == "none" and caps.forced_tool_choice
    return request.prefix_tools if keep else ()


def prompt_cache_key(request: ModelRequest) -> str:
    """A key naming the request's stable prefix: its first system message and its tools.

    OpenAI sends requests with one ``prompt_cache_key`` to the same cache, so every request
    of a run, and of every run of the same agent, reads the prefix they share at the cached
    rate; a different system prompt or tool set gets a key of its own.
    """
    first = request.messages[0] if request.messages else None
    system = first.content if isinstance(first, SystemMessage) else ""
    names = ",".join(t.name for t in request.tools or request.prefix_tools)
    digest = hashlib.blake2b(f"{system}\x00{names}".encode(), digest_size=12)
    return f"ponder-{digest.hexdigest()}"


def wire_messages(
    messages: Sequence[Message], caps: Capabilities, provider: str | None = None
) -> list[dict[str, Any]]:
    """The ledger as OpenAI chat messages.

    Tool messages carry text only: images a tool returned follow the batch's results in a
    user message. A request with images to a provider without ``vision`` is refused.
    """
    wire: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in messages:
        if pending and not isinstance(message, ToolMessage):
            wire.append({"role": "user", "content": pending})
            pending = []
        if getattr(message, "attachments", ()):
            _check_vision(message.attachments, caps, provider)  # type: ignore[union-attr]
        if isinstance(message, SystemMessage) and wire and not caps.late_system:
            wire.append({"role": "user", "content": message.content})  # see `late_system`
            continue
        wire.append(to_wire(message, caps, provider))
        if isinstance(message, ToolMessage) and message.attachments:
            pending.append(
                {"type": "text", "text": f"Returned by {message.name} ({message.call_id}):"}
            )
            pending.extend(map(content_part, message.attachments))
    if pending:
        wire.append({"role": "user", "content": pending})
    return wire


def _check_vision(media: Sequence[Image | File], caps: Capabilities, provider: str | None) -> None:
    if not caps.vision and any(isinstance(m, Image) for m in media):
        raise UserError(
            f"{provider or 'this provider'} takes no images (its capability profile has no "
            "vision): send text only, or set model_capabilities = {vision = true}"
        )


def content_part(media: Image | File) -> dict[str, Any]:
    """An image or file as an OpenAI content part."""
    if isinstance(media, Image):
        return {"type": "image_url", "image_url": {"url": media.data_url()}}
    name = media.name or "file"
    return {"type": "file", "file": {"filename": name, "file_data": media.data_url()}}


def to_wire(message: Message, caps: Capabilities, provider: str | None = None) -> dict[str, Any]:
    """One ledger message as an OpenAI chat message."""
    match message:
        case SystemMessage():
            return {"role": "system", "content": message.content}
        case UserMessage():
            content: Any = message.content
            if message.attachments:
                lead = [{"type": "text", "text": content}] if content else []
                content = [*lead, *map(content_part, message.attachments)]
            user: dict[str, Any] = {"role": "user", "content": content}
            if message.name:
                user["name"] = message.name
            return user
        case AssistantMessage():
            return _assistant(message, caps, provider)
        case ToolMessage():
            if not caps.tool_role:  # the result follows its call: no id the model never saw
                text = f"Result of the tool call {message.name}:\n"
                return {"role": "user", "content": text + message.content}
            return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
        case _:
            assert_never(message)


def _assistant(
    message: AssistantMessage, caps: Capabilities, provider: str | None
) -> dict[str, Any]:
    calls = message.tool_calls
    empty = None if calls and caps.null_content else ""
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or empty}
    if calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    if caps.replays_reasoning:
        own = [
            p.text
            for p in message.parts
            if isinstance(p, ReasoningPart) and p.provider in (None, provider)
        ]
        if "".join(own):
            wire["reasoning_content"] = "".join(own)
    return wire


def _tool(tool: ToolDefinition, caps: Capabilities, cap: int) -> dict[str, Any]:
    parameters = tool.parameters if caps.length_limits else capped_lengths(tool.parameters, cap)
    function: dict[str, Any] = {"name": tool.name, "parameters": parameters}
    if tool.description:
        function["description"] = tool.description
    if tool.strict and is_strict_schema(tool.parameters):
        function["strict"] = True
    return {"type": "function", "function": function}


_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_DATA = frozenset({"default", "examples", "enum", "const"})


def capped_lengths(schema: Any, cap: int = STRING_CAP) -> Any:
    """``schema`` with every string at most ``cap`` long and no ``minLength``.

    ponder still checks the schema's own limits when a call arrives.
    """
    if isinstance(schema, list):
        return [capped_lengths(v, cap) for v in schema]
    if not isinstance(schema, dict):
        return schema
    capped: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "minLength":
            continue
        if key in _DATA:  # values, not schemas
            capped[key] = value
        elif key in _NAMED_SCHEMAS and isinstance(value, dict):  # a property may be "maxLength"
            capped[key] = {name: capped_lengths(sub, cap) for name, sub in value.items()}
        else:
            capped[key] = capped_lengths(value, cap)
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        if "enum" not in schema and "const" not in schema:
            own = schema.get("maxLength")
            capped["maxLength"] = own if isinstance(own, int) and 0 <= own < cap else cap
    elif "maxLength" in schema:  # a limit on a schema of no declared type
        capped.pop("maxLength")
    return capped


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
