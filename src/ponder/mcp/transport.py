"""Open the SDK transport a `MCPServerConfig` names: stdio, streamable HTTP or SSE."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any, TextIO, cast

import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ponder.mcp.config import MCPServerConfig
from ponder.observability.propagation import trace_env, trace_headers

__all__ = ["ServerLog", "open_transport"]

_HTTP_TIMEOUT = 30.0
_SSE_READ_TIMEOUT = 300.0
_LOG_TAIL = 2000


class ServerLog:
    """The stderr of a stdio server, kept in a temporary file so errors can quote its tail."""

    def __init__(self) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile()

    def tail(self) -> str:
        """The last lines the server wrote to stderr ("" when none or closed)."""
        if self.file.closed:
            return ""
        size = os.fstat(self.file.fileno()).st_size
        with open(self.file.fileno(), "rb", closefd=False) as reader:
            reader.seek(max(0, size - _LOG_TAIL))
            return reader.read().decode("utf-8", "replace").strip()

    def close(self) -> None:
        """Release the temporary file."""
        self.file.close()


async def _oauth(config: MCPServerConfig) -> httpx2.Auth | None:
    if config.oauth is None:
        return None
    from ponder.mcp.oauth import build_oauth

    return await build_oauth(config)


async def _add_trace_headers(request: httpx2.Request) -> None:
    """Send the trace context of the call in progress (W3C ``traceparent``), if tracing."""
    request.headers.update(trace_headers())


@asynccontextmanager
async def open_transport(config: MCPServerConfig, log: ServerLog | None) -> AsyncIterator[Any]:
    """Yield the SDK's ``(read_stream, write_stream)`` pair for ``config``."""
    async with AsyncExitStack() as stack:
        match config.transport:
            case "stdio":
                params = StdioServerParameters(
                    command=config.command or "",
                    args=list(config.args),
                    env={**config.env, **trace_env()} or None,
                    cwd=config.cwd,
                )
                errlog = cast(TextIO, log.file) if log is not None else sys.stderr
                streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            case "streamable_http":
                client = httpx2.AsyncClient(
                    headers=config.auth_headers(),
                    timeout=httpx2.Timeout(_HTTP_TIMEOUT, read=_SSE_READ_TIMEOUT),
                    auth=await _oauth(config),
                    event_hooks={"request": [_add_trace_headers]},
                )
                await stack.enter_async_context(client)
                streams = await stack.enter_async_context(
                    streamable_http_client(config.url or "", http_client=client)
                )
            case "sse":
                streams = await stack.enter_async_context(
                    sse_client(
                        config.url or "",
                        headers=config.auth_headers(),
                        auth=await _oauth(config),
                        timeout=_HTTP_TIMEOUT,
                        sse_read_timeout=_SSE_READ_TIMEOUT,
                    )
                )
        yield streams
