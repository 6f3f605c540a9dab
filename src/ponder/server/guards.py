"""ASGI guards in front of the API: request size, bearer token, and where a request is from.

Each answers with the API's JSON error shape, before any route runs.
"""

from __future__ import annotations

import hmac
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CUSTOM_HEADER", "BearerTokenGuard", "BodySizeLimit", "RequestOriginGuard", "send_error"]

CUSTOM_HEADER = "x-ponder-request"
"""A header a browser page of another origin cannot send without the server's consent."""
_STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}


async def send_error(send: Send, status: int, message: str, error_type: str) -> None:
    """Send a JSON error response ``{"error": {"message", "type", "param", "code"}}``."""
    error = {"message": message, "type": error_type, "param": None, "code": None}
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Refuses request bodies larger than ``max_bytes`` with 413 (declared or streamed).

    The body is read (at most ``max_bytes``) before the app runs, so a refusal never
    reaches a route half-way through its parsing.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _read(self, receive: Receive) -> tuple[list[Message], bool]:
        """The request's body messages, and whether they fit the limit."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, True
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                return messages, False
            if not message.get("more_body", False):
                return messages, True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"request body larger than {self.max_bytes} bytes"
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await send_error(send, 413, too_large, "request_too_large")
            return
        buffered, fits = await self._read(receive)
        if not fits:
            await send_error(send, 413, too_large, "request_too_large")
            return

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)


class BearerTokenGuard:
    """Requires ``Authorization: Bearer <token>`` on API paths.

    Only the header counts: a token in the query string would land in access logs and
    browser history. The viewer page and the OpenAPI schema stay public.
    """

    def __init__(self, app: ASGIApp, token: str, protected_prefix: str = "/v1/") -> None:
        self.app = app
        self.token = token.encode()
        self.prefix = protected_prefix

    def _presented(self, scope: Scope) -> bytes | None:
        header = dict(scope["headers"]).get(b"authorization")
        if header is None:
            return None
        scheme, _, value = header.partition(b" ")
        return value.strip() if scheme.lower() == b"bearer" else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 401."""
        if scope["type"] != "http" or not str(scope["path"]).startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        presented = self._presented(scope)
        if presented is None or not hmac.compare_digest(presented, self.token):
            await send_error(send, 401, "missing or wrong bearer token", "authentication_error")
            return
        await self.app(scope, receive, send)


class RequestOriginGuard:
    """Refuses requests a web page of another origin could make on a user's behalf.

    - ``Host`` must be one of ``allowed_hosts`` (the port is ignored; ``"*"`` allows
      any): a DNS-rebinding page reaches a loopback server under its own host name.
    - A state-changing request (POST, PUT, PATCH, DELETE) needs a JSON content type or
      the ``X-Ponder-Request`` header: a cross-origin form or ``fetch`` cannot send
      either without a CORS preflight, which this server never grants.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.allowed = {h.lower() for h in allowed_hosts}

    def _host_allowed(self, headers: dict[bytes, bytes]) -> bool:
        if "*" in self.allowed:
            return True
        host = headers.get(b"host", b"").decode("latin-1").lower()
        name = host.rsplit("]", 1)[0] + "]" if host.startswith("[") else host.rsplit(":", 1)[0]
        return name in self.allowed

    @staticmethod
    def _is_deliberate(headers: dict[bytes, bytes]) -> bool:
        media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        return media == b"application/json" or CUSTOM_HEADER.encode() in headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 403."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if not self._host_allowed(headers):
            message = "this Host is not served here (see ponder serve --allowed-host)"
            await send_error(send, 403, message, "host_not_allowed")
            return
        if scope["method"] in _STATE_CHANGING and not self._is_deliberate(headers):
            message = (
                "state-changing requests need Content-Type: application/json "
                f"or an {CUSTOM_HEADER} header"
            )
            await send_error(send, 403, message, "cross_site_request")
            return
        await self.app(scope, receive, send)
