"""Graceful degradation: requests rewritten for what the provider honours.

It also reads which feature a provider's error refused.

`adapt` turns a `ModelRequest` into the one to send under some `Capabilities`:

- ``tool_choice: "required"`` unsupported → ``"auto"`` plus, in that request only, an
  instruction to call one of the tools (or ``agent_stop`` to finish); plain ``"auto"``
  where the profile says the instruction does harm (``instruct_required=False``);
- a forced named tool unsupported → ``"auto"`` plus an instruction to call that tool;
- structured output without ``json_schema`` → a forced output tool where forcing works,
  otherwise a JSON-in-text instruction (with ``json_object`` mode where the provider has it).

The wire-level degradations (``content: null`` → ``""``, tool results as user messages when
``role: tool`` is dropped, no streaming of automatic tool calls) are applied by the
adapters; every degradation a request needed is reported in ``ModelResponse.degradations``.

`refused_feature` reads a 4xx/5xx: a message that names ``tool_choice``, ``required``,
``response_format``, a message shape or streamed tool calls gives the feature to turn off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ponder.exceptions import ContextOverflowError, EmptyStreamError, ModelError, ModelHTTPError
from ponder.messages import AssistantMessage, Message, ToolMessage, UserMessage
from ponder.models.base import Degradation, ForceTool, ModelRequest
from ponder.models.capabilities import Capabilities, Feature, string_cap
from ponder.models.openai_wire import capped_lengths

__all__ = ["Plan", "adapt", "probe_candidate", "probe_feature", "refused_feature"]

STOP_TOOL = "agent_stop"


@dataclass(frozen=True, slots=True)
class Plan:
    """The request to send, the degradations it needed, and whether to ask for JSON mode."""

    request: ModelRequest
    degradations: tuple[Degradation, ...] = ()
    json_object: bool = False


def adapt(
    request: ModelRequest,
    caps: Capabilities,
    detected: frozenset[Feature] = frozenset(),
    *,
    instruct_required: bool = True,
) -> Plan:
    """The request to send under ``caps``; ``detected`` marks what was learned at run time.

    ``instruct_required=False``: an unsupported ``required`` becomes plain ``auto``, with
    no instruction to call a tool (see `ProviderProfile.instruct_required`).
    """
    notes: list[Degradation] = []

    def note(feature: Feature, action: str) -> None:
        source = "detected" if feature in detected else "profile"
        notes.append(Degradation(feature=feature, action=action, source=source))

    request, json_object = _adapt_output(request, caps, note)
    request = _adapt_choice(request, caps, note, instruct_required)
    _note_wire(request, caps, note)
    return Plan(request, tuple(notes), json_object)


def _adapt_choice(
    request: ModelRequest, caps: Capabilities, note: Any, instruct_required: bool
) -> ModelRequest:
    choice = request.tool_choice
    names = [t.name for t in request.tools]
    if not names:
        return request
    if choice == "required" and not caps.required_tool_choice and not instruct_required:
        note("required_tool_choice", 'tool_choice "auto"')
        return replace(request, tool_choice="auto")
    if choice == "required" and not caps.required_tool_choice:
        note("required_tool_choice", 'tool_choice "auto" with an instruction to call a tool')
        return _instructed(request, _required_instruction(names))
    if isinstance(choice, ForceTool) and not caps.forced_tool_choice:
        note("forced_tool_choice", f'tool_choice "auto" with an instruction to call {choice.name}')
        return _instructed(request, _forced_instruction(choice.name))
    return request


def _adapt_output(
    request: ModelRequest, caps: Capabilities, note: Any
) -> tuple[ModelRequest, bool]:
    schema = request.output
    if schema is None or caps.json_schema_output or caps.forced_tool_choice:
        if schema is not None and not caps.json_schema_output:
            note("json_schema_output", "structured output through a forced output tool")
        return request, False
    mode = " in JSON mode" if caps.json_object_output else ""
    note("json_schema_output", f"structured output as JSON in the text{mode}")
    text = (
        "Answer with one JSON object only, no prose and no code fence. It must match this "
        f"JSON Schema:\n{json.dumps(schema.json_schema, ensure_ascii=False)}"
    )
    adapted = replace(request, output=None, messages=[*request.messages, UserMessage(content=text)])
    return adapted, caps.json_object_output


def _note_wire(request: ModelRequest, caps: Capabilities, note: Any) -> None:
    cap = string_cap(request.settings.max_tokens)
    if not caps.length_limits and any(
        capped_lengths(t.parameters, cap) != t.parameters for t in request.tools
    ):
        note("length_limits", f"string lengths in tool schemas capped at {cap}, no minLength")
    messages = request.messages
    if not caps.null_content and any(_null_content(m) for m in messages):
        note("null_content", 'assistant messages with tool calls sent with content ""')
    if not caps.tool_role and any(isinstance(m, ToolMessage) for m in messages):
        note("tool_role", "tool results sent as user messages")


def _null_content(message: Message) -> bool:
    return isinstance(message, AssistantMessage) and bool(message.tool_calls) and not message.text


def _instructed(request: ModelRequest, text: str) -> ModelRequest:
    messages = [*request.messages, UserMessage(content=text)]
    return replace(request, tool_choice="auto", messages=messages)


def _required_instruction(names: Sequence[str]) -> str:
    listed = ", ".join(names)
    finish = f" When you have the answer, call {STOP_TOOL}." if STOP_TOOL in names else ""
    return f"Reply with a tool call now, not with text: call one of {listed}.{finish}"


def _forced_instruction(name: str) -> str:
    return f"Reply with a call of the tool {name} now, not with text."


def _names_choice(text: str) -> bool:
    return "tool_choice" in text or "tool choice" in text


_SIGNS: tuple[tuple[Feature, Callable[[str], bool]], ...] = (
    ("required_tool_choice", lambda t: "required" in t and _names_choice(t)),
    ("stream_tool_calls", lambda t: "stream" in t and "tool" in t),
    ("forced_tool_choice", _names_choice),
    ("json_schema_output", lambda t: "response_format" in t or "json_schema" in t),
    ("parallel_tool_calls", lambda t: "parallel_tool_calls" in t),
    ("tool_role", lambda t: any(w in t for w in ("role 'tool'", 'role "tool"', "tool role"))),
    ("null_content", lambda t: "content" in t and ("none" in t or "null" in t)),
    ("prompt_cache_key", lambda t: "prompt_cache_key" in t),
)


def refused_feature(error: ModelError, body: dict[str, Any]) -> Feature | None:
    """The feature ``body`` used that ``error`` names, if it is a 4xx/5xx about one."""
    if not isinstance(error, ModelHTTPError) or error.status_code in (408, 409, 429):
        return None
    if isinstance(error, ContextOverflowError):  # the prompt's size, not a feature
        return None
    text = str(error).lower()
    used = _used_features(body)
    return next((f for f, named in _SIGNS if f in used and named(text)), None)


def probe_feature(error: ModelError, body: dict[str, Any]) -> Feature | None:
    """The riskiest feature ``body`` used, to turn off after an error that names none.

    That is a 5xx without a telling message, or a stream the server opened and left empty
    (the stock llama.cpp server refuses a streamed ``"required"`` that way).
    """
    server_error = isinstance(error, ModelHTTPError) and error.status_code >= 500
    if not (server_error or isinstance(error, EmptyStreamError)):
        return None
    return probe_candidate(body)


def probe_candidate(body: dict[str, Any]) -> Feature | None:
    """The feature `probe_feature` would turn off after a telling-nothing failure of ``body``."""
    used = _used_features(body)
    order: tuple[Feature, ...] = (
        "required_tool_choice",
        "json_schema_output",
        "null_content",
        "stream_tool_calls",
    )
    return next((f for f in order if f in used), None)


def _used_features(body: dict[str, Any]) -> set[Feature]:
    used: set[Feature] = set()
    choice = body.get("tool_choice")
    if choice == "required":
        used.add("required_tool_choice")
    elif isinstance(choice, dict):
        used.add("forced_tool_choice")
    if body.get("stream") and body.get("tools") and not isinstance(choice, dict):
        used.add("stream_tool_calls")
    if (body.get("response_format") or {}).get("type") == "json_schema":
        used.add("json_schema_output")
    if "parallel_tool_calls" in body:
        used.add("parallel_tool_calls")
    if "prompt_cache_key" in body:
        used.add("prompt_cache_key")
    for message in body.get("messages", ()):
        if message.get("role") == "tool":
            used.add("tool_role")
        if message.get("role") == "assistant" and message.get("content") is None:
            used.add("null_content")
    return used
