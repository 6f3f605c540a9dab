"""The user tool the lane offers (``--tools tests.models_real.lane_tools:TOOLS``)."""

from ponder.tools import tool

__all__ = ["TOOLS", "multiply"]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


TOOLS = [multiply]
