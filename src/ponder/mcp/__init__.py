"""ponder.mcp: use the tools of any Model Context Protocol server.

```python
from ponder.mcp import MCPToolset, parse_server_spec

async with MCPToolset([parse_server_spec("stdio://[\"node\", \"server.js\"]")]) as toolset:
    tools = await toolset.tools()
```

`MCPToolset` (and the `mcp` SDK behind it) is imported on first use, so that importing
this package only to parse configuration stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ponder.mcp.config import MCPServerConfig, Transport, parse_server_spec, parse_server_specs

if TYPE_CHECKING:
    from ponder.mcp.toolset import MCPToolset

__all__ = ["MCPServerConfig", "MCPToolset", "Transport", "parse_server_spec", "parse_server_specs"]


def __getattr__(name: str) -> Any:
    if name == "MCPToolset":
        from ponder.extras import require

        require("mcp", "MCP servers (agent_mcp_server_scripts)")
        from ponder.mcp.toolset import MCPToolset

        return MCPToolset
    raise AttributeError(f"module 'ponder.mcp' has no attribute {name!r}")
