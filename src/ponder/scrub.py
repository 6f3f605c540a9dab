r"""Lone surrogates: finding and replacing them in text and JSON-like values.

A string can hold a lone surrogate (``"\ud800"``, from a JSON escape a model or server
wrote) that UTF-8 cannot encode, so no store or wire takes it. Whatever ponder keeps or
sends is checked with `is_clean`, and `scrub_text` or `scrub_value` replaces each one
with U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_clean", "scrub_text", "scrub_value"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_text(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def is_clean(value: Any) -> bool:
    """True when no string in a JSON-like value (keys included) has a lone surrogate."""
    if isinstance(value, str):
        return value.isascii() or _SURROGATE.search(value) is None
    if isinstance(value, dict):
        return _is_clean_dict(value)
    if isinstance(value, list | tuple):
        for item in value:
            if not is_clean(item):
                return False
    return True


def _is_clean_dict(value: dict[Any, Any]) -> bool:
    for key, item in value.items():  # strings and numbers checked here: fewer calls
        if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
            return False
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return False
        elif isinstance(item, _CONTAINERS) and not is_clean(item):
            return False
    return True


_CONTAINERS = (dict, list, tuple)


def scrub_value(value: Any) -> Any:
    """`scrub_text` over every string in a JSON-like value (keys included)."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value(v) for v in value]
    return value
