"""Stdin and stdout as event-loop pipes, for a stdio MCP server.

The SDK reads and writes the standard streams through a worker thread per line; a
server answering many small calls spends most of its time in those hops. `connect_stdio`
hands what arrives on fd 0 to an asyncio protocol as it comes and gives a stream writer
on fd 1 instead. Anything that is not a pipe or socket keeps the SDK's own streams.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Callable

__all__ = ["LINE_LIMIT", "connect_stdio"]

LINE_LIMIT = 64 * 1024 * 1024
"""The longest JSON-RPC line accepted (a thought may be large)."""


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def connect_stdio(
    read_protocol: Callable[[], asyncio.Protocol],
) -> asyncio.StreamWriter | None:
    """Feed fd 0 to ``read_protocol()`` and return a writer on fd 1; None unless both are pipes.

    The writer's buffer has no high-water mark: ``drain`` returns once the pipe has taken
    everything written.
    """
    if not (_is_pipe(0) and _is_pipe(1)):
        return None
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(read_protocol, sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    transport.set_write_buffer_limits(high=0)
    return asyncio.StreamWriter(transport, protocol, None, loop)
