"""External tools: offered to the model, answered by the caller (a client, another process).

A call to an external tool suspends the run like a call awaiting approval (its entry in
the ``approval`` payload has ``"external": true``); the caller resumes it with the call's
result, ``{"<call id>": {"action": "result", "output": "..."}}``. ponder never runs them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ponder.tools.definition import ToolDefinition
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = ["EXTERNAL", "external_tool", "external_tools", "is_external"]

EXTERNAL = "external"
"""The `Tool.metadata` key that marks an external tool."""


async def _not_here(ctx: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    return ToolResult.fail(
        f"tool {ctx.tool_name!r} runs on the caller's side: resume the run with its result "
        '({"action": "result", "output": ...}), not with "approve"'
    )


def external_tool(definition: ToolDefinition) -> Tool:
    """A tool the model may call whose result the caller gives when it resumes the run."""
    return Tool(
        name=definition.name,
        description=definition.description,
        parameters=definition.parameters,
        function=_not_here,
        requires_approval=True,
        strict=definition.strict,
        metadata={EXTERNAL: True},
    )


def external_tools(definitions: Iterable[dict[str, Any]]) -> list[Tool]:
    """External tools for definitions stored as JSON (``RunState.external_tools``)."""
    return [external_tool(ToolDefinition.model_validate(d)) for d in definitions]


def is_external(tool: Tool | None) -> bool:
    """True for a tool made by `external_tool`."""
    return tool is not None and bool(tool.metadata.get(EXTERNAL))
