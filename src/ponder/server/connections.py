"""The connections ``ponder serve`` holds: a deadline for each request, a cap, quiet EMFILE.

Uvicorn closes a keep-alive connection idle between requests, but never one that sends
nothing (or half a request line), and it accepts connections without a bound. Idle
sockets then hold file descriptors until the process runs out, every new client waits
forever, and asyncio logs each failed ``accept()`` with a traceback, thousands a second.

`bounded_protocol` closes a connection whose request has not arrived (its headers read)
within ``request_timeout`` seconds of it opening or of its last response, and answers
a connection beyond ``max_connections`` with a 503 at once. `quiet_accept_errors` logs
running out of file descriptors once per `ACCEPT_LOG_SECONDS`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "ACCEPT_LOG_SECONDS",
    "AcceptErrorLog",
    "bounded_protocol",
    "connection_limit",
    "quiet_accept_errors",
]

ACCEPT_LOG_SECONDS = 10.0
_LOG = logging.getLogger("uvicorn.error")
_ACCEPT_FAILED = "socket.accept() out of system resource"
_BUSY_MESSAGE = "the server has too many open connections; retry in a moment"
_BUSY_BODY = json.dumps(
    {"error": {"message": _BUSY_MESSAGE, "type": "server_busy", "param": None, "code": None}}
).encode()
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"retry-after: 1\r\nconnection: close\r\n"
    b"content-length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n" + _BUSY_BODY
)


def connection_limit(requested: int) -> int:
    """``requested``, or half the process's file descriptor limit if that is lower.

    The other half stays for what runs need: the store, the provider's connections, MCP
    servers' pipes.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft // 2))


class _BoundedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol with a request deadline and a connection cap."""

    max_connections = 1000
    request_timeout = 10.0
    _request_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(_BUSY)
            transport.close()
            return
        self._await_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request's headers are in
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_request(self) -> None:
        self._stop_waiting()
        self._request_timer = self.loop.call_later(self.request_timeout, self._give_up)

    def _stop_waiting(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _give_up(self) -> None:
        self._request_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(max_connections: int, request_timeout: float) -> type[H11Protocol]:
    """An h11 protocol class for ``uvicorn.Config(http=...)`` with these bounds."""
    bounds = {"max_connections": max_connections, "request_timeout": request_timeout}
    return type("BoundedH11Protocol", (_BoundedH11Protocol,), bounds)


class AcceptErrorLog:
    """A loop exception handler: failed accepts logged once per `ACCEPT_LOG_SECONDS`.

    Everything else goes to the handler it replaces (or the loop's default).
    """

    def __init__(self, replaced: Any) -> None:
        self.replaced = replaced
        self.last = float("-inf")
        self.skipped = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Handle one exception the loop caught (``context`` as asyncio gives it)."""
        if context.get("message") != _ACCEPT_FAILED:
            if self.replaced is not None:
                self.replaced(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - self.last < ACCEPT_LOG_SECONDS:
            self.skipped += 1
            return
        self.last, skipped, self.skipped = now, self.skipped, 0
        _LOG.warning(
            "cannot accept connections: %s (%d more since the last warning); "
            "new clients wait until connections close",
            context.get("exception"),
            skipped,
        )


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Install `AcceptErrorLog` on ``loop``."""
    loop.set_exception_handler(AcceptErrorLog(loop.get_exception_handler()))
