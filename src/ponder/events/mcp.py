"""Events from MCP servers: failures, logs, progress, sampling and elicitation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ponder.events.base import EventBase

__all__ = ["McpEvent", "McpEventType"]

McpEventType = Literal[
    "connected",
    "connect_failed",
    "disconnected",
    "server_failed",
    "transport_error",
    "tools_listed",
    "tools_changed",
    "tools_renamed",
    "resources_changed",
    "prompts_changed",
    "log",
    "progress",
    "sampling",
    "elicitation",
]


@dataclass(slots=True, kw_only=True)
class McpEvent(EventBase):
    """Something an MCP server did or asked during the run (``type`` says what).

    ``data`` holds the details: ``error`` (with the server's stderr tail) for failures,
    ``level``/``data`` for logs, ``progress``/``total`` for progress, ``status``/``count``/
    ``limit`` for sampling and elicitation. Secrets (tokens) never appear here.
    """

    kind: Literal["mcp_event"] = "mcp_event"
    type: McpEventType
    server: str = ""
    data: dict[str, Any] = field(default_factory=dict)
