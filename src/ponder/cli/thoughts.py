"""`ThoughtView`: one sequential thought of a run as the live displays show it.

Read from the ``sequential_thinking`` tool's result data; branch and revision links are
kept so a renderer can draw the thought tree with superseded thoughts marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ThoughtView", "thought_from_data"]


@dataclass(slots=True)
class ThoughtView:
    """One recorded sequential thought and its links."""

    seq: int
    number: int
    total: int
    text: str
    branch_id: str | None = None
    branch_from: int | None = None
    revises: int | None = None
    revision_type: str | None = None
    supersedes: int | None = None
    superseded_by: int | None = None
    warnings: list[str] = field(default_factory=list)


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def thought_from_data(data: dict[str, Any]) -> ThoughtView:
    """A `ThoughtView` from ``sequential_thinking`` result data (``node`` when present)."""
    node = data.get("node") if isinstance(data.get("node"), dict) else {}
    assert isinstance(node, dict)
    seq = _optional_int(node.get("seq")) or _optional_int(data.get("thought_history_length"))
    branch = node.get("branch_id")
    warnings = data.get("warnings")
    return ThoughtView(
        seq=seq or 0,
        number=_optional_int(data.get("thought_number")) or 0,
        total=_optional_int(data.get("total_thoughts")) or 0,
        text=str(data.get("thought", "")),
        branch_id=branch if isinstance(branch, str) and branch else None,
        branch_from=_optional_int(node.get("branch_from_thought")),
        revises=_optional_int(node.get("revises_thought")) if node.get("is_revision") else None,
        revision_type=node.get("revision_type") if node.get("is_revision") else None,
        supersedes=_optional_int(node.get("supersedes")),
        warnings=[str(w) for w in warnings] if isinstance(warnings, list) else [],
    )
