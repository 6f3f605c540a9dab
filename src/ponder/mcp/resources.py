"""MCP resources as two read tools, and MCP prompts as conversation templates.

When a connected server offers resources, the toolset adds ``mcp_list_resources``
(resources and URI templates, every such server or one) and ``mcp_read_resource``
(``server``, ``uri``); a run reads on its own session (``SessionFor``), so a server that
asks a question while reading asks that run. Prompts are fetched with `get_prompt` and
become the messages a run starts from (``ponder run --mcp-prompt server/name``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import mcp_types as types

from ponder.exceptions import ToolError
from ponder.mcp.client import MCPServerConnection
from ponder.mcp.content import decoded_size
from ponder.messages import AssistantMessage, Message, TextPart, UserMessage
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = [
    "LIST_RESOURCES",
    "READ_RESOURCE",
    "SessionFor",
    "get_prompt",
    "list_prompts",
    "read_resource_text",
    "resource_tools",
]

LIST_RESOURCES = "mcp_list_resources"
READ_RESOURCE = "mcp_read_resource"
_MAX_LISTED = 200

SessionFor = Callable[[str, ToolContext], AbstractContextManager[MCPServerConnection]]
"""The calling run's session to a server, for the block (see `ponder.mcp.pool`)."""


def offers(connection: MCPServerConnection, what: str) -> bool:
    """True when the connected server announced the capability ``what``."""
    capabilities = connection.capabilities
    return capabilities is not None and getattr(capabilities, what, None) is not None


def resource_tools(
    connections: Mapping[str, MCPServerConnection], session_for: SessionFor
) -> list[Tool]:
    """The two resource tools over the servers that offer resources (none when none do)."""
    servers = sorted(name for name, c in connections.items() if offers(c, "resources"))
    if not servers:
        return []

    async def list_call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        only = str(args.get("server") or "")
        return await _list(lambda name: session_for(name, ctx), servers, only)

    async def read_call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        server, uri = str(args.get("server", "")), args.get("uri")
        return await _read(lambda name: session_for(name, ctx), servers, server, uri)

    server_param = {"type": "string", "enum": servers, "description": "the MCP server"}
    return [
        Tool(
            name=LIST_RESOURCES,
            description="List the resources (and URI templates) the MCP servers offer.",
            parameters={"type": "object", "properties": {"server": server_param}},
            function=list_call,
            idempotent=True,
        ),
        Tool(
            name=READ_RESOURCE,
            description="Read one resource of an MCP server by its URI.",
            parameters={
                "type": "object",
                "properties": {"server": server_param, "uri": {"type": "string"}},
                "required": ["server", "uri"],
            },
            function=read_call,
            idempotent=True,
        ),
    ]


async def _list(
    session_of: Callable[[str], AbstractContextManager[MCPServerConnection]],
    servers: list[str],
    only: str,
) -> ToolResult:
    if only and only not in servers:
        return ToolResult.fail(f"unknown server {only!r}; servers with resources: {servers}")
    found: dict[str, Any] = {}
    errors: list[str] = []
    for name in [only] if only else servers:
        try:
            with session_of(name) as connection:
                found[name] = await _listing(connection)
        except ToolError as exc:
            errors.append(str(exc))
    if not found:
        return ToolResult.fail("; ".join(errors))
    text = json.dumps(found, ensure_ascii=False, indent=1)
    return ToolResult.ok(text + ("\nerrors: " + "; ".join(errors) if errors else ""), data=found)


async def _listing(connection: MCPServerConnection) -> dict[str, Any]:
    resources = await connection.run(lambda s: s.list_resources())
    templates = await connection.run(lambda s: s.list_resource_templates())
    return {
        "resources": [
            {"uri": r.uri, "name": r.name, "description": r.description, "mime_type": r.mime_type}
            for r in resources.resources[:_MAX_LISTED]
        ],
        "templates": [
            {"uri_template": t.uri_template, "name": t.name, "description": t.description}
            for t in templates.resource_templates[:_MAX_LISTED]
        ],
    }


async def _read(
    session_of: Callable[[str], AbstractContextManager[MCPServerConnection]],
    servers: list[str],
    server: str,
    uri: Any,
) -> ToolResult:
    if server not in servers:
        return ToolResult.fail(f"unknown server {server!r}; servers with resources: {servers}")
    if not isinstance(uri, str) or not uri:
        return ToolResult.fail("'uri' must be a non-empty string (see mcp_list_resources)")
    try:
        with session_of(server) as connection:
            result = await connection.run(lambda s: s.read_resource(uri))
    except ToolError as exc:
        return ToolResult.fail(str(exc))
    contents = [
        c.model_dump(by_alias=True, mode="json", exclude_none=True) for c in result.contents
    ]
    return ToolResult.ok(_contents_text(result), data={"uri": uri, "contents": contents})


def _contents_text(result: types.ReadResourceResult) -> str:
    parts: list[str] = []
    for item in result.contents:
        if isinstance(item, types.TextResourceContents):
            parts.append(item.text)
        else:
            mime = item.mime_type or "application/octet-stream"
            parts.append(f"[binary {mime}, {decoded_size(item.blob)} bytes]")
    return "\n".join(parts)


async def read_resource_text(connection: MCPServerConnection, uri: str) -> str:
    """The text of one resource (binary parts described); raises `ToolError` when it cannot."""
    return _contents_text(await connection.run(lambda s: s.read_resource(uri)))


async def list_prompts(connection: MCPServerConnection) -> list[types.Prompt]:
    """The prompts one server offers (empty when it offers none)."""
    if not offers(connection, "prompts"):
        await connection.session()
        if not offers(connection, "prompts"):
            return []
    result = await connection.run(lambda s: s.list_prompts())
    return list(result.prompts)


async def get_prompt(
    connection: MCPServerConnection, name: str, arguments: dict[str, str]
) -> list[Message]:
    """The prompt's messages, as ponder messages; raises `ToolError` when it cannot."""
    result = await connection.run(lambda s: s.get_prompt(name, arguments))
    messages: list[Message] = []
    for item in result.messages:
        text = _prompt_text(item.content)
        if item.role == "user":
            messages.append(UserMessage(content=text))
        else:
            messages.append(AssistantMessage(parts=(TextPart(text=text),)))
    return messages


def _prompt_text(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        return f"[resource {resource.uri}, binary]"
    return f"[{getattr(block, 'type', 'content')} content omitted]"
