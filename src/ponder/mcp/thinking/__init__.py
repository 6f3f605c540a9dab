"""The ``sequential_thinking`` MCP server (``ponder mcp thinking``): its entry point
(`server`), the stdio and streamable-HTTP transports (`stdio`, `http`), the fast path
for plain calls (`fast`), JSON text helpers (`json_text`) and its log (`log`).

Run it with ``ponder mcp thinking`` or ``python -m ponder.mcp.thinking``.
"""

__all__: list[str] = []
