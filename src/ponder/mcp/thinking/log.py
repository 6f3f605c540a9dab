"""The stderr box the thinking server draws for each accepted thought.

Widths are measured in terminal cells of the visible text (wide CJK and emoji count two,
combining marks zero, colour codes nothing), so the frame stays intact for any text;
every line of a multi-line thought is framed on its own. A missing companion field is
left out of the header instead of printing a placeholder.
"""

from __future__ import annotations

import os
import unicodedata

from ponder.tools.thinking_state import ThoughtEntry

__all__ = ["cell_width", "is_logging_disabled", "render_thought_box", "thought_header"]

_OFF_VALUES = frozenset({"true", "1", "yes", "on"})
_COLOURS = {"revision": "\x1b[33m", "branch": "\x1b[32m", "thought": "\x1b[34m"}
_RESET = "\x1b[0m"


def is_logging_disabled(environ: dict[str, str] | None = None) -> bool:
    """``DISABLE_THOUGHT_LOGGING`` set to true, 1, yes or on (any case)."""
    value = (os.environ if environ is None else environ).get("DISABLE_THOUGHT_LOGGING", "")
    return value.strip().lower() in _OFF_VALUES


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cell_width(text: str) -> int:
    """Terminal cells ``text`` occupies (no control codes expected)."""
    return sum(_char_width(c) for c in text)


def thought_header(entry: ThoughtEntry) -> tuple[str, str]:
    """The header of a thought's box and its kind (revision > branch > thought)."""
    position = f"{entry.thought_number}/{entry.total_thoughts}"
    if entry.is_revision:
        detail = f" (revising thought {entry.revises_thought})" if entry.revises_thought else ""
        return f"🔄 Revision {position}{detail}", "revision"
    if entry.branch_from_thought is not None:
        label = f", ID: {entry.branch_id}" if entry.branch_id else ""
        return f"🌿 Branch {position} (from thought {entry.branch_from_thought}{label})", "branch"
    return f"💭 Thought {position}", "thought"


def _visible_lines(text: str) -> list[str]:
    cleaned = "".join(c if c.isprintable() or c == "\n" else " " for c in text.expandtabs(4))
    return cleaned.split("\n")


def render_thought_box(entry: ThoughtEntry, *, colour: bool = False) -> str:
    """The framed box for one thought, ending in a newline."""
    header, kind = thought_header(entry)
    lines = _visible_lines(entry.thought)
    width = max(cell_width(line) for line in [header, *lines])

    def row(text: str) -> str:
        return f"│ {text}{' ' * (width - cell_width(text))} │"

    shown_header = row(header)
    if colour:
        shown_header = shown_header.replace(header, f"{_COLOURS[kind]}{header}{_RESET}", 1)
    border = "─" * (width + 2)
    body = [row(line) for line in lines]
    return "\n".join([f"┌{border}┐", shown_header, f"├{border}┤", *body, f"└{border}┘"]) + "\n"
