"""What a session's next turn takes over from its last stored one: the tools' states."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ponder.exceptions import StoreError
from ponder.store.base import StoredRun
from ponder.tools.registry import ToolRegistry

__all__ = ["session_tool_states"]


def session_tool_states(stored: StoredRun, registry: ToolRegistry) -> dict[str, Any]:
    """The stateful tools' states of a session's stored turn, validated; ``{}`` if none.

    `StoreError` if the stored checkpoint or a tool's state is malformed.
    """
    states: dict[str, Any] = {}
    for name, raw in stored.view.tool_states.items():
        tool = registry.get(name)
        if tool is None or tool.state_type is None:
            continue  # a tool this agent no longer offers
        try:
            states[name] = tool.state_type.model_validate(raw)
        except ValidationError as exc:
            raise StoreError(
                f"run {stored.record.run_id!r}: the stored state of tool {name!r} is invalid: "
                f"{exc.errors()[0]['msg']}"
            ) from None
    return states
