"""The thinking server's stdio streams: JSON-RPC lines straight from and to the pipes.

The SDK's ``stdio_server`` runs a reader task and a writer task that pass every message
through a zero-buffer memory stream, two task switches per message each way. When fds 0
and 1 are pipes, `serve_stdio` hands ``Server.run`` two streams that parse a line when
the server asks for the next message and write a reply when the server sends it, with
the SDK's own framing: one message per line, parsed with
``jsonrpc_message_adapter.validate_json``, written with
``model_dump_json(by_alias=True, exclude_unset=True)``. A line that does not parse is
passed on as the exception, as the SDK's transport does. Anything that is not a pipe
keeps the SDK's transport.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ponder.mcp.pipes import open_stdio_pipes

__all__ = ["LineReadStream", "LineWriteStream", "parse_message", "serve_stdio"]


def parse_message(line: bytes) -> types.JSONRPCMessage:
    r"""``jsonrpc_message_adapter.validate_json(line)``, with requests validated directly.

    Only a line with a ``result`` or ``error`` key can make the union choose a response
    or an error over a request, and a key can only hide those names behind a ``\u``
    escape; lines holding none of those bytes skip the union's trial of every member.
    """
    if b'"result"' not in line and b'"error"' not in line and b"\\u" not in line:
        try:
            return types.JSONRPCRequest.model_validate_json(line, by_name=False)
        except ValidationError:
            pass
    return types.jsonrpc_message_adapter.validate_json(line, by_name=False)


class LineReadStream:
    """The SDK's read-stream interface over a pipe: one `SessionMessage` per line."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._closed = False

    async def receive(self) -> SessionMessage | Exception:
        """The next message, or the parse error for a line that is not one."""
        if self._closed:
            raise anyio.ClosedResourceError
        line = await self._reader.readline()
        if not line:
            raise anyio.EndOfStream
        try:
            message = parse_message(line)
        except Exception as exc:
            return exc
        return SessionMessage(message)

    async def aclose(self) -> None:
        """Stop reading; the pipe itself stays open, as with the SDK's transport."""
        self._closed = True

    def __aiter__(self) -> LineReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> LineReadStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class LineWriteStream:
    """The SDK's write-stream interface over a pipe: each message written as one line.

    ``send`` returns once the pipe has taken the whole line (the write buffer's high-water
    mark is zero), like the SDK's write-then-flush; a closed stream or a broken pipe raises
    the anyio error the SDK's dispatcher expects from a gone peer.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        writer.transport.set_write_buffer_limits(high=0)
        self._writer = writer
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        """Write ``item`` as one JSON line and wait until the pipe has taken it."""
        if self._closed:
            raise anyio.ClosedResourceError
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        try:
            self._writer.write(text.encode() + b"\n")
            await self._writer.drain()
        except OSError as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        """Refuse further sends; what was sent has already reached the pipe."""
        self._closed = True

    async def __aenter__(self) -> LineWriteStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one connection on stdin/stdout until the client closes it."""
    options = server.create_initialization_options()
    lines, writer = await open_stdio_pipes()
    if lines is None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)
        return
    await server.run(LineReadStream(lines.reader), LineWriteStream(writer.writer), options)
