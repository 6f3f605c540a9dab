"""Tool arguments from a model: lenient parsing, and errors the model can act on.

Models wrap JSON in code fences, leave trailing commas, or encode the object twice; those
forms are repaired. Anything else that is not a JSON object is an `ArgumentError` whose
issues name each bad field and say what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ponder.tools.coerce import describe_value

__all__ = [
    "ArgumentError",
    "ArgumentIssue",
    "format_path",
    "issues_from_validation_error",
    "parse_arguments_lenient",
]

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ArgumentIssue:
    """One problem with one field; ``path`` is empty for the arguments as a whole."""

    path: str
    message: str

    def render(self) -> str:
        """``- path: message`` (or ``- message`` for the whole object)."""
        return f"- {self.path}: {self.message}" if self.path else f"- {self.message}"


class ArgumentError(ValueError):
    """The arguments of a tool call are invalid; ``issues`` lists every problem found."""

    def __init__(self, issues: Sequence[ArgumentIssue] | str) -> None:
        found = [ArgumentIssue("", issues)] if isinstance(issues, str) else list(issues)
        self.issues: list[ArgumentIssue] = found
        super().__init__("; ".join(i.render()[2:] for i in found))

    def for_model(self, tool_name: str) -> str:
        """The error text shown to the model (without the ``Error:`` prefix)."""
        lines = [f"invalid arguments for tool {tool_name!r}:"]
        lines += [issue.render() for issue in self.issues]
        lines.append("Fix the arguments and call the tool again.")
        return "\n".join(lines)


def format_path(location: Sequence[str | int]) -> str:
    """``("items", 2, "name")`` → ``items[2].name``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def issues_from_validation_error(error: ValidationError) -> list[ArgumentIssue]:
    """Turn pydantic's errors into issues that name the field and what was received."""
    issues = []
    for item in error.errors(include_url=False):
        path = format_path([p for p in item["loc"] if isinstance(p, str | int)])
        if item["type"] == "missing":
            message = "missing"
        elif item["type"] == "extra_forbidden":
            message = "unexpected field; remove it"
        else:
            message = f"{item['msg']}, received {describe_value(item.get('input'))}"
        issues.append(ArgumentIssue(path, message))
    return issues


def parse_arguments_lenient(raw: str) -> dict[str, Any]:
    """Parse a call's argument text into a JSON object, repairing common slips.

    Accepts an empty string (no arguments), a fenced code block, trailing commas and an
    object encoded twice as a JSON string. Raises `ArgumentError` for anything else.
    """
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return {}
    value = _loads(text)
    if isinstance(value, str) and value.strip().startswith("{"):
        value = _loads(value.strip())
    if not isinstance(value, dict):
        raise ArgumentError(
            f'arguments must be a JSON object like {{"name": value}}, '
            f"received {describe_value(value)}"
        )
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError as first:
        repaired = _drop_trailing_commas(text)
        if repaired != text:
            try:
                return json.loads(repaired, parse_constant=_refuse_constant)
            except ValueError:
                pass
        raise ArgumentError(
            f"arguments are not valid JSON: {_describe_json_error(first)}"
        ) from None


def _describe_json_error(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at position {error.pos}"
    return str(error)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]``, outside of strings."""
    out: list[str] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "," and text[index + 1 :].lstrip()[:1] in ("}", "]"):
            continue
        out.append(char)
    return "".join(out)
