"""A minimal HTTP/1.1 server on asyncio for the fake providers.

Hand-rolled (not uvicorn) so the fakes control the wire exactly: delay the first byte,
drop the connection mid-body, send malformed chunks. Keep-alive and chunked bodies only.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["HttpReply", "HttpRequest", "LocalHttpServer"]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class HttpReply:
    """Writes one response: whole, or as a chunked stream; or drops the connection."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.is_closed = False

    async def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        head = {"content-type": "application/json", "content-length": str(len(body))}
        self._writer.write(self._head(status, {**head, **(headers or {})}) + body)
        await self._writer.drain()

    async def send_json(
        self, status: int, value: Any, headers: dict[str, str] | None = None
    ) -> None:
        await self.send(status, json.dumps(value).encode(), headers)

    async def start_stream(
        self, content_type: str = "text/event-stream", status: int = 200
    ) -> None:
        head = {"content-type": content_type, "transfer-encoding": "chunked"}
        self._writer.write(self._head(status, head))
        await self._writer.drain()

    async def send_chunk(self, data: bytes) -> None:
        if not data:  # an empty chunk would end the stream
            return
        self._writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await self._writer.drain()

    async def end_stream(self) -> None:
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()

    def drop(self) -> None:
        """Abort the TCP connection without finishing the response."""
        self.is_closed = True
        self._writer.transport.abort()

    @staticmethod
    def _head(status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()


Handler = Callable[[HttpRequest, HttpReply], Awaitable[None]]


class LocalHttpServer:
    """Serve ``handler`` on 127.0.0.1: ``async with`` in a loop, or ``with`` on a thread."""

    def __init__(self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._handler = handler
        self._host, self._port = host, port
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not running")
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def __aenter__(self) -> LocalHttpServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start_in_thread(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="ponder-fake-http", daemon=True)
        self._thread.start()
        ready.wait()

    def stop_thread(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._thread = self._loop = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._serve_connection(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:
            request = await _read_request(reader)
            if request is None:
                return
            reply = HttpReply(writer)
            await self._handler(request, reply)
            if reply.is_closed or request.headers.get("connection", "").lower() == "close":
                return


async def _read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return HttpRequest(method, path, headers, body)
