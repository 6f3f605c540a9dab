"""Tools for the record/replay CLI tests: each live call says so on stderr."""

from __future__ import annotations

import sys

from ponder.tools import tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    print(f"live multiply({a}, {b})", file=sys.stderr)
    return a * b


TOOLS = [multiply]
