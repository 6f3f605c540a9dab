"""Tools that print, for the CLI's JSON-output tests (``--tools tests.cli.noisy_tools:TOOLS``)."""

from __future__ import annotations

import sys

from ponder.tools import tool


@tool
def shout(text: str) -> str:
    """Print a line from a worker thread, then answer.

    Args:
        text: What to print.
    """
    print(f"SHOUT {text}")
    return "shouted"


@tool
async def whisper(text: str) -> str:
    """Print from the event loop, without a newline, then answer.

    Args:
        text: What to print.
    """
    print(f"WHISPER {text}", end="")
    sys.stdout.write("{not json")
    return "whispered"


TOOLS = [shout, whisper]
