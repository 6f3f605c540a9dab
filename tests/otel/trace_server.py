"""An MCP server that reports the trace context it was given, for the propagation tests.

    python tests/otel/trace_server.py stdio | http

Its one tool, ``trace_context``, answers with the ``TRACEPARENT`` it was started with
(stdio) or the ``traceparent`` header of the request that called it (HTTP, where it
prints ``PORT <n>`` first).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

seen: dict[str, str | None] = {"header": None}


def build_server() -> MCPServer:
    server: MCPServer = MCPServer("trace", log_level="WARNING")

    @server.tool()
    def trace_context() -> str:
        """The trace context this server sees."""
        return json.dumps({"env": os.environ.get("TRACEPARENT"), "header": seen["header"]})

    return server


def recording(app: Any) -> Any:
    async def wrapped(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and scope["method"] == "POST":
            seen["header"] = dict(scope["headers"]).get(b"traceparent", b"").decode() or None
        await app(scope, receive, send)

    return wrapped


def main() -> None:
    server = build_server()
    if sys.argv[1] == "stdio":
        asyncio.run(server.run_stdio_async())
        return
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog until uvicorn serves
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(recording(server.streamable_http_app()), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
