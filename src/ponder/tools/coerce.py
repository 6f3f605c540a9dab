"""Deliberate coercion of untrusted scalar arguments from models.

Models often send ``"2"`` for an integer or ``"true"`` for a boolean; those are accepted.
Ambiguous forms — ``true`` for an integer, lists, hex, fractions, ``"yes"`` — are refused
with a message that says what was expected.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "MAX_SAFE_INTEGER",
    "coerce_boolean",
    "coerce_integer",
    "coerce_number",
    "describe_value",
]

MAX_SAFE_INTEGER = 2**53 - 1
_DECIMAL = re.compile(r"[+-]?\d+")
_REAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def describe_value(value: Any) -> str:
    """A short description of a received value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    return (
        type(value).__name__
        if not isinstance(value, list | dict)
        else ("array" if isinstance(value, list) else "object")
    )


def coerce_integer(value: Any) -> int:
    """An integer, or a base-10 integer string (surrounding spaces allowed).

    Raises ``ValueError`` naming what was received for anything else.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected an integer, received {describe_value(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        return int(value.strip())
    raise ValueError(f"expected an integer, received {describe_value(value)}")


def coerce_boolean(value: Any) -> bool:
    """A boolean, or the string ``"true"``/``"false"`` in any case.

    Raises ``ValueError`` naming what was received for anything else.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f'expected a boolean or "true"/"false", received {describe_value(value)}')


def coerce_number(value: Any) -> int | float:
    """A finite number, or a base-10 decimal string such as ``"2.5"`` or ``"1e3"``.

    Booleans, hex, ``NaN`` and infinities are refused with a ``ValueError``.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a number, received {describe_value(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str) and _REAL.fullmatch(value.strip()):
        number = float(value.strip())
        if math.isfinite(number):
            return int(number) if _DECIMAL.fullmatch(value.strip()) else number
    raise ValueError(f"expected a number, received {describe_value(value)}")
