"""``python -m ponder.mcp.thinking``: the thinking MCP server."""

from ponder.mcp.thinking.server import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
