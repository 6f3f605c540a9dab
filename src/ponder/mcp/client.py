"""One pooled MCP session per server, reconnected with backoff when it breaks.

The SDK's transports and `ClientSession` are context managers that must be entered and
left by one task, so each connection runs them in a background task that lives until the
connection closes or breaks; calls from any task use the session it publishes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp.client.session import ClientSession, ElicitationFnT, ListRootsFnT, SamplingFnT
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from ponder.exceptions import ToolError
from ponder.mcp.config import MCPServerConfig
from ponder.mcp.transport import ServerLog, open_transport

__all__ = [
    "ClientCallbacks",
    "EventSink",
    "MCPServerConnection",
    "ServerCallError",
    "ServerTimeoutError",
    "ServerUnavailableError",
]

EventSink = Callable[[dict[str, Any]], None]
ResultT = TypeVar("ResultT")
ConnectionStatus = Literal["idle", "connecting", "ready", "broken", "closed"]

_CLIENT_INFO = types.Implementation(name="ponder", version="0.1")
_STOP_TIMEOUT = 10.0
_PING_TIMEOUT = 5.0


@dataclass(frozen=True)
class ClientCallbacks:
    """How the client answers a server's own requests; None = not offered (capability off)."""

    sampling: SamplingFnT | None = None
    elicitation: ElicitationFnT | None = None
    list_roots: ListRootsFnT | None = None


class ServerUnavailableError(ToolError):
    """The server could not be reached, started or initialised, or its connection broke."""


class ServerTimeoutError(ToolError):
    """The server did not answer within the timeout."""


class ServerCallError(ToolError):
    """The server answered a request with a protocol error or an unreadable result."""


class MCPServerConnection:
    """A lazily started, pooled session to one MCP server."""

    def __init__(
        self,
        config: MCPServerConfig,
        *,
        init_timeout: float,
        emit: EventSink,
        callbacks: ClientCallbacks | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
    ) -> None:
        self.config = config
        self.name = config.name
        self.init_timeout = init_timeout
        self.status: ConnectionStatus = "idle"
        self.tools_stale = True
        """True when the tool list must be fetched again (never listed, changed, reconnected)."""
        self.last_error: str | None = None
        self._emit = emit
        self._callbacks = callbacks or ClientCallbacks()
        self._backoff = (backoff_base, backoff_max)
        self._failures = 0
        self._failed_at = 0.0
        self._session: ClientSession | None = None
        self._runner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._log: ServerLog | None = None
        self._lock = asyncio.Lock()
        self._teardowns: set[asyncio.Task[None]] = set()

    def retry_delay(self) -> float:
        """Seconds until the next connection attempt is allowed (0 when allowed now)."""
        if self._failures == 0:
            return 0.0
        base, cap = self._backoff
        delay = min(cap, base * 2.0 ** (self._failures - 1))
        return max(0.0, self._failed_at + delay - time.monotonic())

    async def session(self, *, max_wait: float = 0.0) -> ClientSession:
        """The live session, connecting first if needed; waits out backoff up to ``max_wait``."""
        if self._session is not None:
            return self._session
        async with self._lock:
            if self._session is not None:
                return self._session
            if self.status == "closed":
                raise ServerUnavailableError(f"MCP server {self.name!r} is closed")
            delay = self.retry_delay()
            if delay > max_wait:
                raise ServerUnavailableError(
                    f"MCP server {self.name!r} is unavailable ({self.last_error}); "
                    f"next connection attempt in {delay:.1f}s"
                )
            await asyncio.sleep(delay)
            return await self._connect()

    async def list_tools(self, *, max_wait: float = 0.0) -> list[types.Tool]:
        """Every tool the server offers, following pagination; clears `tools_stale`."""
        session = await self.session(max_wait=max_wait)
        self.tools_stale = False
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._request(
                session, session.list_tools(params=params), self.init_timeout
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    @property
    def capabilities(self) -> types.ServerCapabilities | None:
        """What the connected server offers (None before the first connection)."""
        session = self._session
        return session.server_capabilities if session is not None else None

    async def run(self, operation: Callable[[ClientSession], Awaitable[ResultT]]) -> ResultT:
        """Run ``operation`` on the session within the init timeout; errors as `ToolError`."""
        session = await self.session()
        result: ResultT = await self._request(session, operation(session), self.init_timeout)
        return result

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float, progress: ProgressFnT
    ) -> types.CallToolResult:
        """Call one tool; raises a `ToolError` subclass that says what went wrong."""
        session = await self.session(max_wait=timeout / 2)
        call = session.call_tool(name, arguments, progress_callback=progress)
        try:
            result: types.CallToolResult = await self._request(session, call, timeout)
        except ServerTimeoutError:
            await self._check_alive(session)
            raise
        self._failures = 0
        return result

    async def close(self) -> None:
        """Stop the session and its server process; idempotent."""
        async with self._lock:
            self.status = "closed"
            self._session = None
            await self._stop()
            if self._log is not None:
                self._log.close()
        if self._teardowns:
            await asyncio.gather(*self._teardowns, return_exceptions=True)

    async def _request(
        self, session: ClientSession, request: Awaitable[Any], timeout: float
    ) -> Any:
        try:
            async with asyncio.timeout(timeout):
                return await request
        except TimeoutError:
            raise ServerTimeoutError(
                f"MCP server {self.name!r} did not answer within {timeout:g}s"
            ) from None
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                raise self._broken(session, "the connection closed") from exc
            raise ServerCallError(f"MCP server {self.name!r}: {exc.error.message}") from exc
        except ValidationError as exc:
            raise ServerCallError(
                f"MCP server {self.name!r} sent a malformed result: {exc.error_count()} errors"
            ) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise self._broken(session, f"{type(exc).__name__}: {exc}") from exc

    async def _check_alive(self, session: ClientSession) -> None:
        """After a timeout: keep the session if it still answers a ping, else reconnect later."""
        try:
            async with asyncio.timeout(min(_PING_TIMEOUT, self.init_timeout)):
                await session.send_ping()
        except (TimeoutError, MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._broken(session, "the server stopped answering")

    def _broken(self, session: ClientSession | None, reason: str) -> ServerUnavailableError:
        """Mark the session dead (once), stop it in the background; the error to raise."""
        tail = self._log.tail() if self._log is not None else ""
        message = f"MCP server {self.name!r} disconnected: {reason}" + (
            f"; stderr: {tail[-500:]}" if tail else ""
        )
        if session is not None and session is self._session:
            self._session = None
            self.status = "broken"
            self.tools_stale = True
            self.last_error = reason
            self._failures += 1
            self._failed_at = time.monotonic()
            self._emit({"kind": "mcp.disconnected", "server": self.name, "error": message})
            task = asyncio.create_task(_stop_runner(self._runner, self._closing))
            self._runner = self._closing = None
            self._teardowns.add(task)
            task.add_done_callback(self._teardowns.discard)
        return ServerUnavailableError(message)

    async def _connect(self) -> ClientSession:
        await self._stop()
        self.status = "connecting"
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[ClientSession] = loop.create_future()
        self._closing = asyncio.Event()
        if self._log is not None:
            self._log.close()  # the previous process's stderr: its errors were reported
        self._log = ServerLog() if self.config.transport == "stdio" else None
        self._runner = asyncio.create_task(self._serve(ready, self._closing, self._log))
        try:
            async with asyncio.timeout(self.init_timeout):
                session = await asyncio.shield(ready)
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(cancel=True))
            self.status = "idle"
            raise
        except Exception as exc:
            raise await self._connect_failed(exc) from exc
        self._session, self.status, self.tools_stale = session, "ready", True
        self._emit({"kind": "mcp.connected", "server": self.name})
        return session

    async def _connect_failed(self, exc: Exception) -> ServerUnavailableError:
        if isinstance(exc, TimeoutError):
            reason = f"did not initialise within {self.init_timeout:g}s"
        else:
            reason = f"could not start: {_describe_error(exc)}"
        tail = self._log.tail() if self._log is not None else ""
        await self._stop(cancel=True)
        self.status = "broken"
        self.last_error = reason
        self._failures += 1
        self._failed_at = time.monotonic()
        message = f"MCP server {self.name!r} ({self.config.describe()}) {reason}"
        message += f"; stderr: {tail[-500:]}" if tail else ""
        self._emit({"kind": "mcp.connect_failed", "server": self.name, "error": message})
        return ServerUnavailableError(message)

    async def _serve(
        self, ready: asyncio.Future[ClientSession], closing: asyncio.Event, log: ServerLog | None
    ) -> None:
        try:
            async with AsyncExitStack() as stack:
                streams = await stack.enter_async_context(open_transport(self.config, log))
                read_stream, write_stream = streams
                callbacks = self._callbacks
                session = ClientSession(
                    read_stream,
                    write_stream,
                    sampling_callback=callbacks.sampling,
                    elicitation_callback=callbacks.elicitation,
                    list_roots_callback=callbacks.list_roots,
                    message_handler=self._on_message,
                    client_info=_CLIENT_INFO,
                )
                await stack.enter_async_context(session)
                await session.initialize()
                ready.set_result(session)
                await closing.wait()
        except Exception as exc:  # an ExceptionGroup from a transport task group included
            if not ready.done():
                ready.set_exception(exc)
            else:
                self._broken(self._session, _describe_error(exc))

    async def _stop(self, *, cancel: bool = False) -> None:
        """Stop the background task (closing the transport and the server process)."""
        runner, closing = self._runner, self._closing
        self._runner = self._closing = None
        await _stop_runner(runner, closing, cancel=cancel)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_stale = True
            self._emit({"kind": "mcp.tools_changed", "server": self.name})
        elif isinstance(message, types.ResourceListChangedNotification):
            self._emit({"kind": "mcp.resources_changed", "server": self.name})
        elif isinstance(message, types.PromptListChangedNotification):
            self._emit({"kind": "mcp.prompts_changed", "server": self.name})
        elif isinstance(message, types.LoggingMessageNotification):
            params = message.params
            log = {"level": params.level, "logger": params.logger, "data": params.data}
            self._emit({"kind": "mcp.log", "server": self.name, **log})
        elif isinstance(message, Exception):
            self._emit(
                {
                    "kind": "mcp.transport_error",
                    "server": self.name,
                    "error": _describe_error(message),
                }
            )


async def _stop_runner(
    runner: asyncio.Task[None] | None, closing: asyncio.Event | None, *, cancel: bool = False
) -> None:
    """Let a connection's task leave its contexts; cancel it if asked or if it takes too long."""
    if runner is None or closing is None:
        return
    closing.set()
    if cancel:
        runner.cancel()
    done, _ = await asyncio.wait({runner}, timeout=_STOP_TIMEOUT)
    if not done:
        runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)


def _describe_error(exc: BaseException) -> str:
    """A short message for an exception, unwrapping single-exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
