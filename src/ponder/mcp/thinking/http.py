"""The thinking server over streamable HTTP: ``ponder mcp thinking --http HOST:PORT``.

Each streamable-HTTP session (``Mcp-Session-Id``) has its own thinking state. Requests
are checked before the SDK sees them: the ``Host`` and ``Origin`` headers must name this
server (DNS-rebinding protection, the SDK's `TransportSecuritySettings`; more with
``--allow-host``/``--allow-origin``), and with a server token (``--token`` or
``PONDER_MCP_TOKEN``) every request must carry ``Authorization: Bearer <token>``. A
non-loopback address needs a token. The endpoint is ``/mcp``; the bound address is
printed on stderr as ``listening on http://HOST:PORT/mcp`` (port 0 picks a free one).
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ponder.exceptions import UserError

__all__ = ["HTTPOptions", "http_app", "parse_address", "serve_http"]

TOKEN_VARIABLE = "PONDER_MCP_TOKEN"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True)
class HTTPOptions:
    """Where to listen and whom to let in."""

    host: str
    port: int
    token: str | None = None
    allowed_hosts: Sequence[str] = field(default_factory=tuple)
    allowed_origins: Sequence[str] = field(default_factory=tuple)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as (host, port); raises `UserError` when malformed."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UserError(f"--http expects HOST:PORT (e.g. 127.0.0.1:8765), got {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def security_settings(options: HTTPOptions, port: int) -> TransportSecuritySettings:
    """Host/Origin allow-lists: this server's address (and loopback names), plus extras."""
    host = f"[{options.host}]" if ":" in options.host else options.host
    names = [host, *(_LOOPBACK_NAMES if is_loopback(options.host) else ())]
    hosts = [f"{name}:{port}" for name in dict.fromkeys(names)]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *options.allowed_hosts],
        allowed_origins=[*origins, *options.allowed_origins],
    )


def http_app(server: Server[Any], options: HTTPOptions, port: int) -> ASGIApp:
    """The ASGI app: the SDK's streamable-HTTP app behind the token check."""
    app = server.streamable_http_app(
        transport_security=security_settings(options, port), host=options.host
    )
    return app if options.token is None else _TokenGate(app, options.token)


class _TokenGate:
    """Answers 401 to any HTTP request without the right bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                headers = [(b"www-authenticate", b"Bearer"), (b"content-type", b"text/plain")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": b"missing or wrong token"})
                return
        await self.app(scope, receive, send)


def serve_http(server: Server[Any], options: HTTPOptions) -> None:
    """Listen until interrupted; refuses a non-loopback address without a token."""
    import anyio
    import uvicorn

    if options.token is None and not is_loopback(options.host):
        raise UserError(
            f"serving on {options.host} needs a token: pass --token or set {TOKEN_VARIABLE}"
        )
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {options.host}:{options.port}: {exc.strerror}") from None
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    port = sock.getsockname()[1]
    config = uvicorn.Config(http_app(server, options, port), log_level="warning", lifespan="on")
    shown = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    print(f"listening on http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    anyio.run(_serve, uvicorn.Server(config), sock)


async def _serve(server: Any, sock: socket.socket) -> None:
    await server.serve(sockets=[sock])
