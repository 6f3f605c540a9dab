"""Reading a provider's response defensively: fields of SDK objects or dicts, coerced or refused.

The SDKs build their response objects without validating them, so any field may hold any
JSON value (or be missing). A call's odd fields become that call's problem (a tool error
result); a response that cannot be read at all becomes a `ModelResponseError`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ponder.exceptions import ModelResponseError

__all__ = [
    "arguments_text",
    "call_id",
    "call_name",
    "count",
    "get",
    "items",
    "label",
    "new_call_id",
    "text",
    "text_or_none",
    "unreadable",
]


def get(value: Any, name: str) -> Any:
    """``value.name`` (or ``value[name]`` for a dict); ``None`` if it has no such field."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def items(value: Any, what: str) -> list[Any]:
    """A list field (``None`` is empty); `ModelResponseError` if it is not a list."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    raise unreadable(f"{what} is a {type(value).__name__}, not a list")


def text_or_none(value: Any, what: str) -> str | None:
    """A text field; a list of text parts is joined; `ModelResponseError` for anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(get(p, "text"), str) for p in value):
        return "".join(get(p, "text") for p in value)
    raise unreadable(f"{what} is a {type(value).__name__}, not text")


def text(value: Any, what: str) -> str:
    """`text_or_none`, with ``None`` read as empty."""
    return text_or_none(value, what) or ""


def label(value: Any) -> str | None:
    """A short label field (finish reason, model name): text as is, anything else dropped."""
    return value if isinstance(value, str) else None


def count(value: Any) -> int:
    """A token count: a non-negative integer, anything else 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def new_call_id() -> str:
    """A fresh call id for a call the provider sent without a usable one."""
    return f"call_{uuid.uuid4().hex[:16]}"


def call_id(value: Any) -> str:
    """A call's id: text or a number as text; a fresh id for anything else."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return new_call_id()


def call_name(value: Any) -> str:
    """A call's tool name; anything but text becomes a name no tool has (an error result)."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


def arguments_text(value: Any) -> str:
    """A call's argument text: text as is, an object as its JSON, ``None`` as no arguments.

    Anything else (a number, a list) becomes JSON text that fails as the call's arguments.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def unreadable(why: str, model_name: str | None = None) -> ModelResponseError:
    """The error for a response ponder cannot read."""
    return ModelResponseError(
        f"the provider sent a response ponder cannot read: {why}", model_name=model_name
    )
