"""Turn an MCP `CallToolResult` into a `ToolResult` without losing any content.

The model sees the text blocks (and short placeholders for images, audio and binary
resources); ``ToolResult.data`` keeps every block as sent plus ``structuredContent``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types

from ponder.tools.tool import ToolResult

__all__ = ["decoded_size", "to_tool_result"]


def to_tool_result(result: types.CallToolResult) -> ToolResult:
    """The ToolResult for an MCP tool result; ``isError`` becomes a failed result."""
    blocks = [
        block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in result.content
    ]
    lines = [line for line in (_describe(block) for block in result.content) if line]
    if not any(isinstance(b, types.TextContent) for b in result.content):
        if result.structured_content is not None:
            lines.append(json.dumps(result.structured_content, ensure_ascii=False))
    output = "\n".join(lines)
    data: dict[str, Any] = {"content": blocks}
    if result.structured_content is not None:
        data["structured_content"] = result.structured_content
    if result.is_error:
        return ToolResult.fail(output or "the tool reported an error", data=data)
    return ToolResult.ok(output, data=data)


def _describe(block: types.ContentBlock) -> str:
    """The text the model sees for one content block."""
    match block:
        case types.TextContent():
            return block.text
        case types.ImageContent():
            return f"[image {block.mime_type}, {decoded_size(block.data)} bytes]"
        case types.AudioContent():
            return f"[audio {block.mime_type}, {decoded_size(block.data)} bytes]"
        case types.ResourceLink():
            return f"[resource link {block.uri}" + (f": {block.name}]" if block.name else "]")
        case types.EmbeddedResource():
            return _describe_resource(block.resource)
    return ""  # pragma: no cover - a block type newer than this module


def _describe_resource(resource: types.TextResourceContents | types.BlobResourceContents) -> str:
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {resource.uri}]\n{resource.text}"
    mime = resource.mime_type or "application/octet-stream"
    return f"[resource {resource.uri}, {mime}, {decoded_size(resource.blob)} bytes]"


def decoded_size(data: str) -> int:
    """The size in bytes of base64 ``data`` (its length when it is not base64)."""
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
