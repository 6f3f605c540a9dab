"""OAuth 2.1 for remote MCP servers, on the SDK's `OAuthClientProvider`.

The SDK does the protocol: protected-resource and authorization-server discovery,
dynamic client registration, PKCE, token refresh and scope step-up. ponder adds the
pieces around it: `FileTokenStorage` (one ``0600`` JSON file per server URL) or
`StoreTokenStorage` (the run store's secrets table, when ``token_store`` is a store URL:
``sqlite:///...`` or ``postgresql://...``), the interactive flow's browser and local
redirect listener (`RedirectListener`), and the headless flows (see ``oauth_grants``).
Tokens never reach messages, logs or events.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import socket
import sys
import webbrowser
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, BaseModel

from ponder.mcp.config import MCPServerConfig, OAuthSettings
from ponder.store import open_store

__all__ = [
    "FileTokenStorage",
    "RedirectListener",
    "StoreTokenStorage",
    "build_oauth",
    "is_store_url",
    "token_file",
]

ModelT = TypeVar("ModelT", bound=BaseModel)
_DEFAULT_STORE = Path("~/.local/state/ponder/mcp-oauth")
_PAGE = b"<html><body><p>ponder: authorization %s. You can close this window.</p></body></html>"


def token_file(settings: OAuthSettings, url: str) -> Path:
    """Where the tokens for the server at ``url`` are kept."""
    folder = Path(settings.token_store).expanduser() if settings.token_store else _DEFAULT_STORE
    digest = hashlib.sha256(url.encode()).hexdigest()[:24]
    return folder.expanduser() / f"{digest}.json"


class FileTokenStorage:
    """The SDK's `TokenStorage` in one JSON file, written atomically, readable by its owner only."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _write(self, key: str, value: dict[str, Any]) -> None:
        data = {**self._read(), "url": self.url, key: value}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, or None (none, unreadable, or for another URL)."""
        raw = self._read().get("tokens")
        return _parsed(OAuthToken, raw)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep ``tokens``."""
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The registered client, or None."""
        return _parsed(OAuthClientInformationFull, self._read().get("client"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the registered client."""
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    async def stored_redirect_port(self) -> int | None:
        """The port of the redirect URI the stored client was registered with, if any."""
        return _redirect_port(self._read().get("client") or {})


def is_store_url(token_store: str | None) -> bool:
    """True when ``token_store`` names a run store rather than a directory."""
    return bool(token_store) and str(token_store).startswith(
        ("sqlite:", "postgresql://", "postgres://")
    )


class StoreTokenStorage:
    """The SDK's `TokenStorage` in a run store's secrets (scope ``mcp-oauth``, by server URL).

    The store is opened for each read or write and closed after it: tokens are needed
    rarely (at a connection or a refresh), and the OAuth flow may run on any event loop.
    """

    SCOPE = "mcp-oauth"

    def __init__(self, store_url: str, url: str) -> None:
        self.store_url = store_url
        self.url = url

    async def _read(self) -> dict[str, Any]:
        store = open_store(self.store_url)
        try:
            return await store.get_secret(self.SCOPE, self.url) or {}
        finally:
            await store.close()

    async def _write(self, key: str, value: dict[str, Any]) -> None:
        store = open_store(self.store_url)
        try:
            found = await store.get_secret(self.SCOPE, self.url) or {}
            await store.set_secret(self.SCOPE, self.url, {**found, key: value})
        finally:
            await store.close()

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, or None."""
        return _parsed(OAuthToken, (await self._read()).get("tokens"))

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep ``tokens``."""
        await self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The registered client, or None."""
        return _parsed(OAuthClientInformationFull, (await self._read()).get("client"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the registered client."""
        await self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    async def stored_redirect_port(self) -> int | None:
        """The port of the redirect URI the stored client was registered with, if any."""
        return _redirect_port((await self._read()).get("client") or {})


def _redirect_port(client: dict[str, Any]) -> int | None:
    for uri in client.get("redirect_uris") or ():
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return None


def _parsed(model: type[ModelT], raw: Any) -> ModelT | None:
    if not isinstance(raw, dict):
        return None
    try:
        return model.model_validate(raw)
    except ValueError:
        return None


class RedirectListener:
    """A one-shot HTTP listener on 127.0.0.1 that takes the authorization redirect."""

    def __init__(self, port: int, timeout: float, open_browser: bool, server: str) -> None:
        self.port = port or _free_port()
        self.timeout = timeout
        self.open_browser = open_browser
        self.server_name = server
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        """The redirect URI registered with the authorization server."""
        return f"http://127.0.0.1:{self.port}/callback"

    async def redirect(self, url: str) -> None:
        """Listen, then send the user to ``url`` (browser, and the URL on stderr)."""
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        print(f"authorize MCP server {self.server_name!r} at: {url}", file=sys.stderr, flush=True)
        if self.open_browser:
            await asyncio.to_thread(webbrowser.open, url)

    async def callback(self) -> AuthorizationCodeResult:
        """The code the redirect brought; `OAuthFlowError` when refused or too late."""
        if self._result is None:
            raise OAuthFlowError("the authorization redirect was never started")
        try:
            async with asyncio.timeout(self.timeout):
                return await self._result
        except TimeoutError:
            raise OAuthFlowError(f"no authorization within {self.timeout:g}s") from None
        finally:
            if self._server is not None:
                self._server.close()
                self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ValueError, asyncio.IncompleteReadError):
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            target = head.split(b" ", 2)[1].decode("ascii", "replace")
            parts = urlsplit(target)
            if parts.path != "/callback":
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            else:
                self._take(parse_qs(parts.query))
                page = _PAGE % (b"refused" if self._failed() else b"complete")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
                writer.write(b"Content-Length: %d\r\n\r\n" % len(page) + page)
            await writer.drain()
        writer.close()

    def _take(self, query: dict[str, list[str]]) -> None:
        result = self._result
        if result is None or result.done():
            return
        first = {k: v[0] for k, v in query.items() if v}
        if "code" in first:
            result.set_result(
                AuthorizationCodeResult(
                    code=first["code"], state=first.get("state"), iss=first.get("iss")
                )
            )
        else:
            reason = first.get("error", "no code in the redirect")
            detail = first.get("error_description")
            result.set_exception(
                OAuthFlowError(
                    f"authorization refused: {reason}" + (f" ({detail})" if detail else "")
                )
            )

    def _failed(self) -> bool:
        result = self._result
        return result is not None and result.done() and result.exception() is not None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def build_oauth(config: MCPServerConfig) -> httpx2.Auth:
    """The httpx auth for ``config`` (which has ``oauth`` settings)."""
    settings = config.oauth
    url = config.url or ""
    assert settings is not None
    storage: FileTokenStorage | StoreTokenStorage
    if is_store_url(settings.token_store):
        storage = StoreTokenStorage(str(settings.token_store), url)
    else:
        storage = FileTokenStorage(token_file(settings, url), url)
    if settings.flow == "private_key_jwt":
        from ponder.mcp.oauth_grants import private_key_jwt_provider

        return private_key_jwt_provider(settings, url, storage)
    if settings.flow == "identity_assertion":
        from ponder.mcp.oauth_grants import identity_assertion_provider

        return identity_assertion_provider(settings, url, storage)
    if settings.flow == "client_credentials":
        return ClientCredentialsOAuthProvider(
            server_url=url,
            storage=storage,
            client_id=settings.client_id or "",
            client_secret=settings.client_secret.get_secret_value()
            if settings.client_secret
            else "",
            scope=settings.scope,
            issuer=settings.issuer,
        )
    port = settings.redirect_port or await storage.stored_redirect_port() or 0
    listener = RedirectListener(
        port, settings.authorize_timeout, settings.open_browser, config.name
    )
    metadata = OAuthClientMetadata(
        client_name=settings.client_name,
        redirect_uris=[AnyUrl(listener.redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=settings.scope,
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=listener.redirect,
        callback_handler=listener.callback,
        client_metadata_url=settings.client_metadata_url,
    )
