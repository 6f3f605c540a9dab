"""JSON text as ``json.dumps(value, indent=2, ensure_ascii=False)`` writes it, faster.

``indent`` makes the standard library fall back to its pure-Python encoder, which builds
a fresh set of closures per call; the thinking server's results are small dicts and
lists of strings and integers, so they are laid out here directly (`indented_json`), or,
when they hold no floats, by pydantic-core's encoder, which lays such values out
character for character alike (`indented_json_without_floats`).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from pydantic_core import to_json

__all__ = ["indented_json", "indented_json_without_floats"]


def indented_json_without_floats(value: Any) -> str:
    """`indented_json` for a value holding no floats (their spelling would differ).

    Strings pydantic-core cannot encode (lone surrogates) fall back to `indented_json`.
    """
    try:
        return to_json(value, indent=2).decode()
    except ValueError:
        return indented_json(value)


def indented_json(value: Any, indent: str = "\n") -> str:
    """``value`` as 2-space-indented JSON, character for character as ``json.dumps``."""
    kind = type(value)
    if kind is str:
        return str(encode_basestring(value))
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + "  "
        items = [f"{_key(k)}: {indented_json(v, inner)}" for k, v in value.items()]
        return "{" + inner + ("," + inner).join(items) + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = indent + "  "
        items = [indented_json(v, inner) for v in value]
        return "[" + inner + ("," + inner).join(items) + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def _key(key: Any) -> str:
    if type(key) is str:
        return str(encode_basestring(key))
    # The standard library's rules (numbers, booleans, None become strings) for the rest.
    return json.dumps({key: 0}, ensure_ascii=False)[1:-4]
