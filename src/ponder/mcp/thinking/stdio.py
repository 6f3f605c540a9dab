"""The thinking server's stdio streams: JSON-RPC lines straight from and to the pipes.

The SDK's ``stdio_server`` runs a reader task and a writer task that pass every message
through a zero-buffer memory stream, two task switches per message each way. When fds 0
and 1 are pipes, `serve_stdio` serves over two streams that parse a line when
the server asks for the next message and write a reply when the server sends it, with
the SDK's own framing: one message per line, parsed with
``jsonrpc_message_adapter.validate_json``, written with
``model_dump_json(by_alias=True, exclude_unset=True)``. A line that does not parse is
passed on as the exception, as the SDK's transport does. The read stream also holds the
frames up to the client's first request, which picks the protocol era as in
``Server.run``; the SDK's loop for that era then serves the connection, without the
relay task ``Server.run`` puts in front of it. On a 2026-07-28 connection the read stream
can also answer the thinking tool's calls itself, in line (`ponder.mcp.thinking.fast`).
Anything that is not a pipe keeps the SDK's transport and ``Server.run``.
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, runner
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ponder.mcp.pipes import open_stdio_pipes
from ponder.mcp.thinking.fast import Answer, FastToolCall

__all__ = ["LEAD_LIMIT", "LineReadStream", "LineWriteStream", "parse_message", "serve_stdio"]

LEAD_LIMIT = 8
"""Frames kept from before the first request (the SDK's ``_PRE_REQUEST_REPLAY_LIMIT``)."""
logger = logging.getLogger(__name__)
_HAS_ERA_LOOPS = all(
    hasattr(runner, name)
    for name in ("_has_modern_envelope", "_serve_modern_stream", "_serve_legacy_stream")
)
"""Whether this SDK has the per-era loops ``Server.run`` routes to (else it runs itself)."""


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
        self._lead: list[SessionMessage | Exception] = []
        self._fast: Answer | None = None
        self._fast_writer: LineWriteStream | None = None
        self._handed_on = False

    def answer_in_line(self, answer: Answer, writer: LineWriteStream) -> None:
        """Let ``answer`` reply to the lines it takes (see `ponder.mcp.thinking.fast`).

        A line it answers is written to ``writer`` before the next line is read, so a
        reply is never lost to an end of input right after its request. Before answering,
        the stream yields once when it has handed a message to the server since its last
        answer: the server's task for that message then runs first, so calls change the
        state in the order they arrived, as when the server handles every line.
        """
        self._fast, self._fast_writer = answer, writer

    async def open(self) -> types.JSONRPCRequest | None:
        """Read up to the first request, keeping it and what came before it to be received.

        As the SDK's era routing does, at most ``LEAD_LIMIT`` frames before the request are
        kept. None when the input ends first.
        """
        try:
            while True:
                item = await self._next()
                message = item.message if isinstance(item, SessionMessage) else None
                if isinstance(message, types.JSONRPCRequest):
                    self._lead.append(item)
                    return message
                if len(self._lead) < LEAD_LIMIT:
                    self._lead.append(item)
        except anyio.EndOfStream:
            return None

    async def receive(self) -> SessionMessage | Exception:
        """The next message, or the parse error for a line that is not one."""
        if self._closed:
            raise anyio.ClosedResourceError
        if self._lead:
            return self._lead.pop(0)
        return await self._next()

    async def _next(self) -> SessionMessage | Exception:
        while True:
            line = await self._reader.readline()
            if not line:
                raise anyio.EndOfStream
            if self._fast is None or not await self._answered(self._fast, line):
                break
        self._handed_on = True
        try:
            message = parse_message(line)
        except Exception as exc:
            return exc
        return SessionMessage(message)

    async def _answered(self, answer: Answer, line: bytes) -> bool:
        if self._handed_on:
            self._handed_on = False
            await asyncio.sleep(0)
        try:
            reply = answer(line)
        except Exception:
            # Only the checks before the call can get here, and they change nothing.
            logger.exception("in-line answer failed; the server handles the line")
            return False
        if reply is None:
            return False
        if self._fast_writer is not None:
            await self._fast_writer.send_line(reply)
        return True

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

    async def send_line(self, line: bytes) -> None:
        """Write one encoded reply line; dropped, as the SDK drops replies, once gone."""
        if self._closed:
            return
        try:
            self._writer.write(line)
            await self._writer.drain()
        except OSError:
            self._closed = True

    async def aclose(self) -> None:
        """Refuse further sends; what was sent has already reached the pipe."""
        self._closed = True

    async def __aenter__(self) -> LineWriteStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def serve_stdio(server: Server[Any], fast: FastToolCall | None = None) -> None:
    """Serve one connection on stdin/stdout until the client closes it.

    With ``fast``, a 2026-07-28 connection over pipes answers the calls it covers in line
    (`ponder.mcp.thinking.fast`); everything else, and every handshake-era connection,
    is served by the SDK.
    """
    options = server.create_initialization_options()
    lines, writer = await open_stdio_pipes()
    if lines is None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)
        return
    read_stream, write_stream = LineReadStream(lines.reader), LineWriteStream(writer.writer)
    if not _HAS_ERA_LOOPS:
        await server.run(read_stream, write_stream, options)
        return
    await _serve_in_era(server, read_stream, write_stream, options, fast)


async def _serve_in_era(
    server: Server[Any],
    read_stream: LineReadStream,
    write_stream: LineWriteStream,
    options: InitializationOptions,
    fast: FastToolCall | None,
) -> None:
    """``Server.run`` without its relay task: the stream itself holds the opening frames.

    The client's first request picks the protocol era exactly as in
    ``serve_dual_era_loop``; then the SDK's own loop for that era serves the connection.
    """
    try:
        async with server.lifespan(server) as state:
            opening = await read_stream.open()
            if (
                opening is not None
                and opening.method != "initialize"
                and runner._has_modern_envelope(opening.params)
            ):
                answer = fast.bind(state) if fast is not None else None
                if answer is not None:
                    read_stream.answer_in_line(answer, write_stream)
                await runner._serve_modern_stream(
                    server, read_stream, write_stream, lifespan_state=state, raise_exceptions=False
                )
            else:
                await runner._serve_legacy_stream(
                    server,
                    read_stream,
                    write_stream,
                    lifespan_state=state,
                    session_id=None,
                    init_options=options,
                    raise_exceptions=False,
                )
    finally:
        await read_stream.aclose()
        await write_stream.aclose()
