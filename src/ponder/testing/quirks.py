"""Rude behaviours of real OpenAI-compatible servers, switchable on the fake.

Each quirk is modelled on a server seen in the wild (most on the stock llama-cpp-python
server with ``--chat_format chatml-function-calling``):

- ``ignore_tool_choice``: a forced or required request is answered with text;
- ``error_on_required``: ``tool_choice: "required"`` → HTTP 500 with an empty message; a
  streamed one → 200, an empty stream, and the connection closed;
- ``error_on_null_content``: an assistant message with ``content: null`` → HTTP 500, a
  validation error naming ``content``;
- ``drop_tool_messages``: ``role: tool`` messages never reach the model (the script);
- ``repeat_function_name``: a streamed call repeats its name (and id) in every chunk;
- ``reuse_call_ids``: call ids restart at ``call_0`` in every response;
- ``tool_calls_as_text``: calls are written into the text as ``<tool_call>{...}</tool_call>``;
- ``refuse_response_format``: a ``json_schema`` response format → HTTP 400 naming it;
- ``refuse_streamed_tools``: streaming with tools and an automatic choice → HTTP 500;
- ``refuse_unknown_fields``: a request field outside the chat-completions basics (e.g.
  ``prompt_cache_key``) → HTTP 400 "Unrecognized request argument supplied: …", as strict
  OpenAI-compatible servers answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, get_args

from ponder.testing.script import FakeReply

__all__ = [
    "QUIRKS",
    "Quirk",
    "breaks_stream",
    "check_quirks",
    "refusal",
    "rewrite_reply",
    "visible_body",
]

Quirk = Literal[
    "ignore_tool_choice",
    "error_on_required",
    "error_on_null_content",
    "drop_tool_messages",
    "repeat_function_name",
    "reuse_call_ids",
    "tool_calls_as_text",
    "refuse_response_format",
    "refuse_streamed_tools",
    "refuse_unknown_fields",
]
QUIRKS: tuple[Quirk, ...] = get_args(Quirk)


def _null_content(n: int) -> str:
    return (
        "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', "
        f"{n}, 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should "
        "be a valid string', 'input': None}"
    )


def check_quirks(quirks: Iterable[str]) -> frozenset[str]:
    """The quirks as a set; `ValueError` naming an unknown one."""
    found = frozenset(quirks)
    unknown = sorted(found - set(QUIRKS))
    if unknown:
        raise ValueError(f"unknown quirk {unknown[0]!r}; known: {', '.join(QUIRKS)}")
    return found


def breaks_stream(body: dict[str, Any], quirks: frozenset[str]) -> bool:
    """Whether this server answers ``body`` with 200, no events, and a closed connection."""
    required = body.get("tool_choice") == "required"
    return bool(body.get("stream")) and required and "error_on_required" in quirks


_BASIC_FIELDS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_tokens",
        "max_completion_tokens",
        "stream",
        "stream_options",
        "response_format",
        "top_p",
        "stop",
        "seed",
        "n",
        "user",
    }
)


def refusal(body: dict[str, Any], quirks: frozenset[str]) -> tuple[int, str] | None:
    """The error status and message this server answers ``body`` with, if any."""
    if "refuse_unknown_fields" in quirks:
        unknown = sorted(set(body) - _BASIC_FIELDS)
        if unknown:
            return 400, f"Unrecognized request argument supplied: {unknown[0]}"
    choice = body.get("tool_choice")
    if "error_on_required" in quirks and choice == "required":
        return 500, ""
    if "refuse_response_format" in quirks:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return 400, "response_format of type json_schema is not supported"
    if "error_on_null_content" in quirks:
        for n, message in enumerate(body.get("messages", ())):
            if message.get("role") == "assistant" and message.get("content") is None:
                return 500, _null_content(n)
    streamed_auto = body.get("stream") and body.get("tools") and not isinstance(choice, dict)
    if "refuse_streamed_tools" in quirks and streamed_auto:
        return 500, "Automatic streaming tool choice is not supported"
    return None


def visible_body(body: dict[str, Any], quirks: frozenset[str]) -> dict[str, Any]:
    """The request as the model sees it (tool messages dropped where the server drops them)."""
    if "drop_tool_messages" not in quirks:
        return body
    messages = [m for m in body.get("messages", ()) if m.get("role") != "tool"]
    return {**body, "messages": messages}


def rewrite_reply(fake: FakeReply, body: dict[str, Any], quirks: frozenset[str]) -> FakeReply:
    """The scripted reply as this server would really send it."""
    forced = body.get("tool_choice") == "required" or isinstance(body.get("tool_choice"), dict)
    if "ignore_tool_choice" in quirks and forced and fake.tool_calls:
        text = fake.content or "Let me think about which tool fits before I call one."
        return fake.model_copy(update={"tool_calls": [], "content": text, "finish_reason": None})
    if "tool_calls_as_text" in quirks and fake.tool_calls:
        written = "".join(
            "<tool_call>"
            + json.dumps({"name": c.name, "arguments": json.loads(c.argument_text or "{}")})
            + "</tool_call>"
            for c in fake.tool_calls
        )
        text = (fake.content or "") + written
        return fake.model_copy(update={"tool_calls": [], "content": text, "finish_reason": None})
    if "reuse_call_ids" in quirks and fake.tool_calls:
        calls = [c.model_copy(update={"id": f"call_{i}"}) for i, c in enumerate(fake.tool_calls)]
        return fake.model_copy(update={"tool_calls": calls})
    return fake
