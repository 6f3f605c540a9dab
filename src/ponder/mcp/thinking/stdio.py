"""The thinking server's stdio streams: JSON-RPC lines straight from and to the pipes.

The SDK's ``stdio_server`` runs a reader task and a writer task that pass every message
through a zero-buffer memory stream, two task switches per message each way. When fds 0
and 1 are pipes, `serve_stdio` serves over two streams with the SDK's own framing: one
message per line, parsed with ``jsonrpc_message_adapter.validate_json``, written with
``model_dump_json(by_alias=True, exclude_unset=True)``. A line that does not parse is
passed on as the exception, as the SDK's transport does. The read stream also holds the
frames up to the client's first request, which picks the protocol era as in
``Server.run``; the SDK's loop for that era then serves the connection, without the
relay task ``Server.run`` puts in front of it. On a 2026-07-28 connection the read stream
can also answer the thinking tool's calls itself, in line (`ponder.mcp.thinking.fast`):
as the bytes arrive, with no task switch, while the SDK has nothing of the connection's
in hand. Anything that is not a pipe keeps the SDK's transport and ``Server.run``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, runner
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ponder.mcp.pipes import LINE_LIMIT, connect_stdio
from ponder.mcp.thinking.fast import Answer, FastToolCall

__all__ = [
    "LEAD_LIMIT",
    "LineReadStream",
    "LineTooLongError",
    "LineWriteStream",
    "parse_message",
    "serve_stdio",
]

LEAD_LIMIT = 8
"""Frames kept from before the first request (the SDK's ``_PRE_REQUEST_REPLAY_LIMIT``)."""
_SKIPPED = b""
"""Kept in place of a line over the limit (a real line is never empty)."""
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


class LineTooLongError(ValueError):
    """Received in place of a line over the read stream's limit, whose bytes are dropped."""


class LineWriteStream:
    """The SDK's write-stream interface over a pipe: each message written as one line.

    ``send`` returns once the pipe has taken the whole line (the writer has no
    high-water mark), like the SDK's write-then-flush; a closed stream or a broken pipe
    raises the anyio error the SDK's dispatcher expects from a gone peer.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._transport = writer.transport
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

    def write_line(self, line: bytes) -> bool:
        """Write one encoded reply line now; whether the pipe has taken all that was written.

        Dropped, as the SDK drops replies, once the stream or the pipe is gone.
        """
        if not self._closed:
            self._transport.write(line)
        return self._transport.get_write_buffer_size() == 0

    async def flush(self) -> None:
        """Wait until the pipe has taken every line written; give up once it is gone."""
        try:
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


class LineReadStream:
    """The SDK's read-stream interface over a pipe: one `SessionMessage` per line.

    Bytes arrive through `feed` (an asyncio protocol on fd 0 calls it). While the
    stream answers in line (`answer_in_line`) and holds no line for the SDK, a line the
    answer takes is answered there and then; any other line is kept, and with it every
    later line, with reading paused, until the SDK's loop has received them all.
    """

    def __init__(self, line_limit: int = LINE_LIMIT) -> None:
        self._line_limit = line_limit
        self._lines: deque[bytes] = deque()
        self._partial = bytearray()
        self._skipping = False
        self._eof = False
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._lead: list[SessionMessage | Exception] = []
        self._fast: Answer | None = None
        self._writer: LineWriteStream | None = None
        self._handed_on = False
        self._in_line = False

    def answer_in_line(self, answer: Answer, writer: LineWriteStream) -> None:
        """Let ``answer`` reply to the lines it takes (see `ponder.mcp.thinking.fast`).

        A line it answers is written to ``writer`` before any later line is looked at, and
        the end of input waits until the pipe has taken it. Before answering, the stream
        yields once when it has handed a message to the server since its last answer: the
        server's task for that message then runs first, so calls change the state in the
        order they arrived, as when the server handles every line.
        """
        self._fast, self._writer = answer, writer

    def attach(self, transport: asyncio.ReadTransport) -> None:
        """The transport that feeds this stream (paused while lines wait for the SDK)."""
        self._transport = transport

    def feed(self, data: bytes) -> None:
        """Take the bytes read from the pipe: each complete line is answered or kept.

        A line over the limit is kept as a `LineTooLongError`, its bytes dropped as they come.
        """
        start, end = 0, data.find(b"\n")
        while end >= 0:
            piece = data if start == 0 and end == len(data) - 1 else data[start : end + 1]
            if self._skipping:
                self._skipping = False  # the end of a line already kept as too long
            else:
                if self._partial:
                    self._partial += piece
                    piece = bytes(self._partial)
                    self._partial.clear()
                if len(piece) > self._line_limit:
                    self._keep(_SKIPPED)
                else:
                    self._take(piece)
            start, end = end + 1, data.find(b"\n", end + 1)
        if start < len(data) and not self._skipping:
            self._partial += data[start:]
            if len(self._partial) > self._line_limit:
                self._partial.clear()
                self._skipping = True
                self._keep(_SKIPPED)

    def feed_eof(self) -> None:
        """The input ended: a last line without a newline still counts."""
        if self._eof:
            return
        if self._partial and not self._skipping:
            self._take(bytes(self._partial))
        self._partial.clear()
        self._eof = True
        self._wake()

    def _take(self, line: bytes) -> None:
        if self._in_line and self._fast is not None and self._writer is not None:
            reply = self._answer(self._fast, line)
            if reply is not None:
                if not self._writer.write_line(reply):
                    # The client is not reading: answer later lines only once it has all.
                    self._in_line = False
                    self._pause()
                return
        self._keep(line)

    def _keep(self, line: bytes) -> None:
        self._in_line = False
        self._lines.append(line)
        self._pause()

    def _pause(self) -> None:
        if self._transport is not None:
            self._transport.pause_reading()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _answer(self, answer: Answer, line: bytes) -> bytes | None:
        try:
            return answer(line)
        except Exception:
            # Only the checks before the call can get here, and they change nothing.
            logger.exception("in-line answer failed; the server handles the line")
            return None

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
            if self._lines:
                line = self._lines.popleft()
                if line == _SKIPPED or self._fast is None:
                    break
                if not await self._answered(self._fast, line):
                    break
            elif self._eof:
                if self._writer is not None:
                    await self._writer.flush()
                raise anyio.EndOfStream
            else:
                await self._wait()
        self._handed_on = True
        if line == _SKIPPED:
            return LineTooLongError(f"a line longer than {self._line_limit} bytes was skipped")
        try:
            message = parse_message(line)
        except Exception as exc:
            return exc
        return SessionMessage(message)

    async def _answered(self, answer: Answer, line: bytes) -> bool:
        if self._handed_on:
            self._handed_on = False
            await asyncio.sleep(0)
        reply = self._answer(answer, line)
        if reply is None:
            return False
        if self._writer is not None:
            self._writer.write_line(reply)
            await self._writer.flush()
        return True

    async def _wait(self) -> None:
        """Wait for input, answering in line meanwhile when the stream may."""
        if self._handed_on and self._fast is not None:
            self._handed_on = False
            await asyncio.sleep(0)  # the server's task for the last message runs first
        if self._writer is not None:
            await self._writer.flush()
        if self._lines or self._eof:
            return
        self._in_line = self._fast is not None
        self._waiter = asyncio.get_running_loop().create_future()
        if self._transport is not None:
            self._transport.resume_reading()
        try:
            await self._waiter
        finally:
            self._waiter = None
            self._in_line = False

    async def aclose(self) -> None:
        """Stop reading; the pipe itself stays open, as with the SDK's transport."""
        self._closed = True
        if self._transport is not None:
            self._transport.pause_reading()

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


class _StdinProtocol(asyncio.Protocol):
    """Hands what fd 0 delivers to a `LineReadStream`."""

    def __init__(self, stream: LineReadStream) -> None:
        self._stream = stream

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._stream.attach(transport)

    def data_received(self, data: bytes) -> None:
        self._stream.feed(data)

    def eof_received(self) -> None:
        self._stream.feed_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stream.feed_eof()


async def serve_stdio(server: Server[Any], fast: FastToolCall | None = None) -> None:
    """Serve one connection on stdin/stdout until the client closes it.

    With ``fast``, a 2026-07-28 connection over pipes answers the calls it covers in line
    (`ponder.mcp.thinking.fast`); everything else, and every handshake-era connection,
    is served by the SDK.
    """
    options = server.create_initialization_options()
    read_stream = LineReadStream()
    writer = await connect_stdio(lambda: _StdinProtocol(read_stream))
    if writer is None:
        async with stdio_server() as (sdk_read_stream, sdk_write_stream):
            await server.run(sdk_read_stream, sdk_write_stream, options)
        return
    write_stream = LineWriteStream(writer)
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
