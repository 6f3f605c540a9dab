"""Tool calls a local model wrote as text because its server did not parse them.

`recover_text_calls` finds, in a response without tool calls, calls of offered tools in
the forms local models write:

- Hermes / Qwen: ``<tool_call>{"name": "add", "arguments": {...}}</tool_call>``;
- Llama / Functionary: ``<function=add>{...}</function>``;
- llama.cpp's chatml-function-calling: ``functions.add:`` then a JSON object;
- a bare JSON object (optionally fenced) naming an offered tool:
  ``{"name": "add", "arguments": {...}}`` (also ``parameters`` for ``arguments``).

The calls become `ToolCallPart`s with fresh ids and the markup is cut out of the text, so
it never reaches an answer. Text naming no offered tool is left alone.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

from ponder.messages import AssistantPart, TextPart, ToolCallPart
from ponder.models.base import ModelResponse

__all__ = ["recover_text_calls"]

_TAGGED = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"<function=([\w.-]+)>\s*(\{.*?\})?\s*</function>", re.DOTALL)
_CHATML = re.compile(r"functions\.([\w-]+):\s*(\{.*?\})(?=\s*(?:functions\.|$))", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def recover_text_calls(response: ModelResponse, offered: Iterable[str]) -> ModelResponse:
    """``response`` with tool calls written as text turned into real calls of offered tools."""
    names = set(offered)
    text = response.text
    if response.tool_calls or not names or not text.strip():
        return response
    calls, rest = _find(text, names)
    if not calls:
        return response
    parts: list[AssistantPart] = [p for p in response.parts if not isinstance(p, TextPart)]
    if rest.strip():
        parts.append(TextPart(text=rest.strip()))
    parts += calls
    finish = "tool_calls" if response.finish_reason in (None, "stop") else response.finish_reason
    return response.model_copy(update={"parts": tuple(parts), "finish_reason": finish})


def _find(text: str, names: set[str]) -> tuple[list[ToolCallPart], str]:
    for finder in (_tagged, _function, _chatml):
        calls, rest = finder(text, names)
        if calls:
            return calls, rest
    return _bare(text, names)


def _tagged(text: str, names: set[str]) -> tuple[list[ToolCallPart], str]:
    calls: list[ToolCallPart] = []
    for match in _TAGGED.finditer(text):
        call = _from_object(_load(match.group(1)), names)
        if call is not None:
            calls.append(call)
    return calls, _TAGGED.sub("", text) if calls else text


def _function(text: str, names: set[str]) -> tuple[list[ToolCallPart], str]:
    calls = [
        _call(m.group(1), m.group(2) or "{}")
        for m in _FUNCTION.finditer(text)
        if m.group(1) in names
    ]
    return calls, _FUNCTION.sub("", text) if calls else text


def _chatml(text: str, names: set[str]) -> tuple[list[ToolCallPart], str]:
    calls = [_call(m.group(1), m.group(2)) for m in _CHATML.finditer(text) if m.group(1) in names]
    return calls, _CHATML.sub("", text) if calls else text


def _bare(text: str, names: set[str]) -> tuple[list[ToolCallPart], str]:
    body = text.strip()
    fenced = _FENCE.match(body)
    call = _from_object(_load(fenced.group(1) if fenced else body), names)
    return ([call], "") if call is not None else ([], text)


def _from_object(value: Any, names: set[str]) -> ToolCallPart | None:
    if not isinstance(value, dict):
        return None
    name = value.get("name") or value.get("function") or value.get("tool")
    if not isinstance(name, str) or name not in names:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        return _call(name, arguments)
    return _call(name, json.dumps(arguments if arguments is not None else {}, ensure_ascii=False))


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _call(name: str, arguments: str) -> ToolCallPart:
    return ToolCallPart.from_raw(f"call_{uuid.uuid4().hex[:16]}", name, arguments)
