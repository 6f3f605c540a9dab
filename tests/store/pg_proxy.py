"""A TCP proxy in front of PostgreSQL that can lose the reply to one statement.

`drop_reply_to(marker)`: the next client message containing ``marker`` reaches the server,
which runs it (and commits it), but its reply never reaches the client: the connection is
closed instead — what a client sees when the network or the server dies right after a
commit. Plain-text connections only (``sslmode=disable``).
"""

from __future__ import annotations

import socket
import threading
from typing import Self

__all__ = ["LossyProxy"]

_READY = b"Z\x00\x00\x00\x05"  # ReadyForQuery: the server is done answering


class LossyProxy:
    """Forwards 127.0.0.1:<port> to ``target``; see the module docstring."""

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self._marker: bytes | None = None
        self._lock = threading.Lock()
        self.dropped = 0
        self.answers = 0
        """How many times the server said it was done answering (round trips, roughly)."""
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []

    @property
    def port(self) -> int:
        return int(self._server.getsockname()[1])

    def drop_reply_to(self, marker: bytes) -> None:
        """Lose the reply to the next message that contains ``marker``."""
        with self._lock:
            self._marker = marker

    def __enter__(self) -> Self:
        self._start(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        for sock in list(self._sockets):
            sock.close()

    def _start(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            losing = threading.Event()
            self._start(self._requests, client, upstream, losing)
            self._start(self._replies, upstream, client, losing)

    def _requests(
        self, client: socket.socket, upstream: socket.socket, losing: threading.Event
    ) -> None:
        while data := _read(client):
            with self._lock:
                if self._marker is not None and self._marker in data:
                    self._marker = None
                    losing.set()
            try:
                upstream.sendall(data)
            except OSError:
                break
        _close(client, upstream)

    def _replies(
        self, upstream: socket.socket, client: socket.socket, losing: threading.Event
    ) -> None:
        held = b""
        while data := _read(upstream):
            if losing.is_set():
                held += data
                if _READY in held:  # the server has answered (and committed): lose it
                    self.dropped += 1
                    break
                continue
            with self._lock:
                self.answers += data.count(_READY)
            try:
                client.sendall(data)
            except OSError:
                break
        _close(client, upstream)


def _read(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def _close(*socks: socket.socket) -> None:
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
