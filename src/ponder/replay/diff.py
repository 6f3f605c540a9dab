"""Readable diffs between what a cassette recorded and what a replay did."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["diff_lines", "path_lines", "request_lines"]

MAX_DIFF_LINES = 80


def _value_lines(key: str, value: Any) -> list[str]:
    if isinstance(value, str) and "\n" in value:
        return [f"  {key}:", *(f"    {line}" for line in value.splitlines())]
    return [f"  {key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"]


def request_lines(request: dict[str, Any]) -> list[str]:
    """A request as lines a person can read: settings, tools, then each message."""
    lines = [
        f"tool_choice: {json.dumps(request.get('tool_choice'), sort_keys=True)}",
        f"output: {json.dumps(request.get('output'), sort_keys=True)}",
        f"temperature: {request.get('temperature')}  max_tokens: {request.get('max_tokens')}",
    ]
    if request.get("extra_body"):
        lines.append(f"extra_body: {json.dumps(request['extra_body'], sort_keys=True)}")
    for tool in request.get("tools") or ():
        name = tool.get("name") if isinstance(tool, dict) else tool
        lines.append(f"tool {name}: {json.dumps(tool, ensure_ascii=False, sort_keys=True)}")
    for index, message in enumerate(request.get("messages") or ()):
        if not isinstance(message, dict):
            lines.append(f"message {index}: {message!r}")
            continue
        lines.append(f"message {index} ({message.get('kind', '?')}):")
        for key, value in message.items():
            if key != "kind":
                lines.extend(_value_lines(key, value))
    return lines


def path_lines(visits: Sequence[tuple[int, str | None]]) -> list[str]:
    """Node visits as ``pc N NAME`` lines."""
    return [f"pc {pc:>3} {name or '(no node)'}" for pc, name in visits]


def diff_lines(recorded: list[str], replayed: list[str]) -> str:
    """A unified diff, cassette first; cut after `MAX_DIFF_LINES` lines."""
    lines = list(difflib.unified_diff(recorded, replayed, "cassette", "replay", n=2, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... ({cut} more diff lines)"]
    return "\n".join(lines)
