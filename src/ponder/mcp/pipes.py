"""Stdin and stdout as asyncio pipes, for the MCP SDK's stdio server.

The SDK reads and writes the standard streams through a worker thread per line; a
server answering many small calls spends most of its time in those hops. These two
adapters give it the same interface (``async for line`` / ``write`` + ``flush``) on
event-loop pipe transports instead. Anything that is not a pipe or socket keeps the
SDK's own streams.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import Any

__all__ = ["PipeLines", "PipeWriter", "open_stdio_pipes"]

LINE_LIMIT = 64 * 1024 * 1024
"""The longest JSON-RPC line accepted (a thought may be large)."""


class PipeLines:
    """``async for line in PipeLines(reader)``: decoded lines until end of input."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class PipeWriter:
    """``await write(text)`` and ``await flush()`` on a pipe transport."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        """Queue ``text`` on the pipe."""
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        """Wait until the pipe has taken what was written."""
        await self.writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def open_stdio_pipes() -> tuple[Any, Any]:
    """``(lines, writer)`` over fds 0 and 1 when both are pipes, else ``(None, None)``."""
    if not (_is_pipe(0) and _is_pipe(1)):
        return None, None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return PipeLines(reader), PipeWriter(writer)
