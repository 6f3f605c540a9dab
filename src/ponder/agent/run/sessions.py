"""What a session's next turn takes over from its last stored one: the tools' states."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ponder.exceptions import StoreError
from ponder.store.base import StoredRun
from ponder.tools.registry import ToolRegistry

__all__ = ["session_tool_states"]


def session_tool_states(stored: StoredRun, registry: ToolRegistry) -> dict[str, Any]:
    """The stateful tools' states of a session's stored turn, validated; ``{}`` if none."""
    vm = stored.header.get("vm")
    state = vm.get("state") if isinstance(vm, dict) else None
    found = state.get("tool_states") if isinstance(state, dict) else None
    states: dict[str, Any] = {}
    for name, raw in (found or {}).items() if isinstance(found, dict) else ():
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
