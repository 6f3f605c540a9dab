"""MCP server configuration: the spec's `agent_mcp_server_scripts` entries and a structured form.

String entries (the spec's `agent_mcp_server_scripts`):

- ``stdio://["cmd", "arg", ...]`` (a JSON list) or ``stdio://cmd arg ...``
- a plain command line (``python server.py --flag``; a bare ``.py``/``.js`` path runs with
  its interpreter)
- ``streamable+http(s)://...`` and plain ``http(s)://...`` for streamable HTTP
- ``sse://...`` and ``sse+http(s)://...`` for the SSE transport

Credentials in a URL become auth: ``user:pwd@host`` is HTTP basic, ``token@host`` a bearer
token. A table in ``ponder.toml`` gives the same fields by name (`MCPServerConfig`).
This module does not import the `mcp` SDK so that ``import ponder`` stays fast.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import PurePath
from typing import Any, Literal, NoReturn
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from ponder.exceptions import ConfigError

__all__ = [
    "CONFIG_KEY",
    "MCPServerConfig",
    "OAuthSettings",
    "Transport",
    "parse_server_spec",
    "parse_server_specs",
]

CONFIG_KEY = "agent_mcp_server_scripts"
Transport = Literal["stdio", "streamable_http", "sse"]

ACCEPTED_FORMS = (
    'accepted forms: stdio://["cmd", "arg", ...]; a plain command line ("python server.py"); '
    "streamable+http(s)://host/path or http(s)://host/path (streamable HTTP); "
    "sse://host/path or sse+http(s)://host/path (SSE); credentials as user:pwd@host (basic) "
    "or token@host (bearer); or a table with name, transport, command/url, args, env, "
    "headers, token, username, password, timeout, oauth"
)

_SCHEMES: dict[str, tuple[Transport, str]] = {
    "http": ("streamable_http", "http"),
    "https": ("streamable_http", "https"),
    "streamable+http": ("streamable_http", "http"),
    "streamable+https": ("streamable_http", "https"),
    "sse": ("sse", "http"),
    "sse+http": ("sse", "http"),
    "sse+https": ("sse", "https"),
}
_SCRIPT_RUNNERS = {".py": sys.executable, ".js": "node", ".mjs": "node", ".cjs": "node"}
_RUNNERS = {"node", "python", "python3", "npx", "uvx", "uv", "bun", "bunx", "deno", "pipx"}
_GENERIC_PARTS = {"index", "main", "__main__", "dist", "build", "lib", "src", "bin", "cli", "run"}


class OAuthSettings(BaseModel):
    """OAuth 2.1 for one remote server (``oauth = {...}`` or ``oauth = true`` in its table).

    ``browser`` (the default) opens the authorization page and takes the code on a local
    redirect listener. The headless flows: ``client_credentials`` (``client_id`` and
    ``client_secret``), ``private_key_jwt`` (client credentials with a signed JWT:
    ``client_id`` and ``private_key`` or ``private_key_file``, PEM) and
    ``identity_assertion`` (enterprise-managed cross-app access, SEP-990: the user's
    ``id_token`` is exchanged at ``idp_token_endpoint`` for an ID-JAG, which the
    authorization server ``issuer`` trades for an access token; ``client_id`` and
    ``client_secret`` are the client's there). Tokens and the registered client are kept
    in ``token_store``: a directory (default ``~/.local/state/ponder/mcp-oauth``, one file
    per server URL) or a run store URL (``sqlite:///...``, ``postgresql://...``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    flow: Literal["browser", "client_credentials", "private_key_jwt", "identity_assertion"] = (
        "browser"
    )
    scope: str | None = None
    """Space-separated scopes to ask for; None = what the server's challenge names."""
    client_name: str = "ponder"
    client_id: str | None = None
    client_secret: SecretStr | None = None
    issuer: str | None = None
    """Headless flows: the only authorization server that may receive the credentials."""
    redirect_port: int = Field(default=0, ge=0, le=65535)
    """browser: the local redirect listener's port; 0 = a free one (kept with the client)."""
    client_metadata_url: str | None = None
    """browser: an https URL of this client's metadata document, used as its client id
    where the authorization server supports that (instead of registering)."""
    open_browser: bool = True
    authorize_timeout: float = Field(default=300.0, gt=0)
    token_store: str | None = None
    private_key: SecretStr | None = None
    """private_key_jwt: the PEM private key that signs the client assertion."""
    private_key_file: str | None = None
    """private_key_jwt: a file holding that key (instead of ``private_key``)."""
    signing_algorithm: str = "RS256"
    """private_key_jwt: the JWT algorithm (RS256, ES256, ...)."""
    id_token: SecretStr | None = None
    """identity_assertion: the user's ID token from the enterprise identity provider."""
    idp_token_endpoint: str | None = None
    """identity_assertion: the identity provider's token endpoint (RFC 8693 exchange)."""
    idp_client_id: str | None = None
    idp_client_secret: SecretStr | None = None
    token_endpoint_auth_method: Literal["client_secret_post", "client_secret_basic"] = (
        "client_secret_post"
    )
    """identity_assertion: how the client authenticates at the authorization server."""

    @model_validator(mode="after")
    def _check_flow(self) -> OAuthSettings:
        needs = {
            "client_credentials": ("client_id", "client_secret"),
            "private_key_jwt": ("client_id",),
            "identity_assertion": (
                "client_id",
                "client_secret",
                "issuer",
                "id_token",
                "idp_token_endpoint",
            ),
        }.get(self.flow, ())
        missing = [name for name in needs if not getattr(self, name)]
        if missing:
            raise ValueError(f"the {self.flow} flow needs {' and '.join(missing)}")
        if self.flow == "private_key_jwt" and not (self.private_key or self.private_key_file):
            raise ValueError("the private_key_jwt flow needs private_key or private_key_file")
        return self


class MCPServerConfig(BaseModel):
    """One MCP server: how to reach it and how long to wait for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    transport: Transport
    command: str | None = None
    """stdio: the executable."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: extra environment variables, merged over a safe default environment."""
    cwd: str | None = None
    url: str | None = None
    """HTTP transports: the endpoint, without credentials."""
    headers: dict[str, str] = Field(default_factory=dict)
    token: SecretStr | None = None
    """Bearer token sent as ``Authorization: Bearer <token>``."""
    username: str | None = None
    password: SecretStr | None = None
    timeout: float | None = Field(default=None, gt=0)
    """Seconds per tool call on this server; None = the toolset's default."""
    oauth: OAuthSettings | None = None
    """HTTP transports: authorize with OAuth 2.1 (see `OAuthSettings`)."""

    @model_validator(mode="after")
    def _check_target(self) -> MCPServerConfig:
        if self.transport == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs a command")
        elif not self.url or urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError(f"a {self.transport} server needs an http(s) url")
        credentials = [self.token is not None, self.username is not None, self.oauth is not None]
        if sum(credentials) > 1:
            raise ValueError("give one of token (bearer), username/password (basic) or oauth")
        if self.oauth is not None and self.transport == "stdio":
            raise ValueError("oauth is for HTTP servers, not stdio ones")
        return self

    def auth_headers(self) -> dict[str, str]:
        """The request headers including the Authorization header from token or user/password."""
        import base64

        headers = dict(self.headers)
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token.get_secret_value()}"
        elif self.username is not None:
            secret = self.password.get_secret_value() if self.password else ""
            raw = f"{self.username}:{secret}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode("ascii")
        return headers

    def describe(self) -> str:
        """A one-line description without secrets, for messages and events."""
        if self.transport == "stdio":
            return shlex.join([self.command or "", *self.args])
        return f"{self.transport} {self.url}"


def parse_server_spec(entry: str | dict[str, Any]) -> MCPServerConfig:
    """Turn one `agent_mcp_server_scripts` entry (string or table) into a config.

    Raises `ConfigError` naming the entry and the accepted forms when it is invalid.
    """
    if isinstance(entry, dict):
        return _from_table(entry)
    if not isinstance(entry, str):
        _fail(entry, f"expected a string or a table, got {type(entry).__name__}")
    text = entry.strip()
    if not text:
        _fail(entry, "the entry is empty")
    if text.startswith("stdio://"):
        return _stdio_config(_stdio_argv(entry, text.removeprefix("stdio://")), entry)
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if match:
        return _url_config(entry, text, match.group(1).lower())
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        _fail(entry, f"cannot split the command line: {exc}")
    return _stdio_config(argv, entry)


def parse_server_specs(entries: list[str | dict[str, Any]]) -> list[MCPServerConfig]:
    """Parse every entry of `agent_mcp_server_scripts`; names are made unique in order."""
    if not isinstance(entries, list):
        raise ConfigError(CONFIG_KEY, f"expected a list of entries, got {type(entries).__name__}")
    configs = [parse_server_spec(entry) for entry in entries]
    names = unique_names([c.name for c in configs])
    return [c.model_copy(update={"name": n}) for c, n in zip(configs, names, strict=True)]


def unique_names(names: list[str]) -> list[str]:
    """``names`` with repeats suffixed ``_2``, ``_3``... deterministically, in order."""
    seen: set[str] = set()
    result = []
    for name in names:
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        result.append(candidate)
    return result


def _fail(entry: object, problem: str) -> NoReturn:
    raise ConfigError(
        CONFIG_KEY, f"invalid MCP server entry {entry!r}: {problem}; {ACCEPTED_FORMS}"
    )


def _from_table(entry: dict[str, Any]) -> MCPServerConfig:
    data = dict(entry)
    if isinstance(data.get("command"), list):
        argv = [str(a) for a in data["command"]]
        if not argv:
            _fail(entry, "the command list is empty")
        data["command"], data["args"] = argv[0], argv[1:] + list(data.get("args", []))
    data.setdefault("transport", "stdio" if data.get("command") else _transport_of(data.get("url")))
    if data.get("oauth") is True:
        data["oauth"] = {}
    elif data.get("oauth") is False:
        data.pop("oauth")
    if "name" not in data:
        data["name"] = _derive_name(data)
    try:
        return MCPServerConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}"
            for err in exc.errors()
        )
        _fail(entry, problems)


def _transport_of(url: object) -> str:
    if not isinstance(url, str):
        return "streamable_http"
    scheme = url.split("://", 1)[0].lower()
    return _SCHEMES.get(scheme, ("streamable_http", ""))[0]


def _derive_name(data: dict[str, Any]) -> str:
    if data.get("command"):
        return _name_from_argv([str(data["command"]), *map(str, data.get("args", []))])
    url = data.get("url")
    return _name_from_host(urlsplit(url).hostname or "") if isinstance(url, str) else "mcp"


def _stdio_argv(entry: str, rest: str) -> list[str]:
    rest = rest.strip()
    if not rest.startswith("["):
        try:
            return shlex.split(rest)
        except ValueError as exc:
            _fail(entry, f"cannot split the command line: {exc}")
    try:
        argv = json.loads(rest)
    except json.JSONDecodeError as exc:
        _fail(entry, f"the stdio:// part is not a JSON list ({exc.msg})")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        _fail(entry, "stdio:// needs a JSON list of strings")
    return argv


def _stdio_config(argv: list[str], entry: str) -> MCPServerConfig:
    if not argv or not argv[0]:
        _fail(entry, "the command is empty")
    runner = _SCRIPT_RUNNERS.get(PurePath(argv[0]).suffix.lower())
    if runner is not None:
        argv = [runner, *argv]
    return MCPServerConfig(
        name=_name_from_argv(argv), transport="stdio", command=argv[0], args=argv[1:]
    )


def _url_config(entry: str, text: str, scheme: str) -> MCPServerConfig:
    if scheme not in _SCHEMES:
        _fail(entry, f"unknown scheme {scheme!r}")
    transport, http_scheme = _SCHEMES[scheme]
    parts = urlsplit(text)
    try:
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        _fail(entry, f"bad host or port ({exc})")
    if not host:
        _fail(entry, "the URL has no host")
    netloc = host if ":" not in host else f"[{host}]"
    netloc += f":{port}" if port is not None else ""
    url = urlunsplit((http_scheme, netloc, parts.path or "/", parts.query, ""))
    auth: dict[str, Any] = {}
    if parts.username is not None and parts.password is not None:
        auth = {"username": unquote(parts.username), "password": unquote(parts.password)}
    elif parts.username:
        auth = {"token": unquote(parts.username)}
    return MCPServerConfig(name=_name_from_host(host), transport=transport, url=url, **auth)


def _name_from_argv(argv: list[str]) -> str:
    words = argv[1:] if PurePath(argv[0]).name.lower() in _RUNNERS or _is_python(argv[0]) else argv
    words = [w for w in words if w and not w.startswith("-")] or argv
    target = words[0]
    if "/" in target and target.startswith("@"):  # an npm package: @scope/name@version
        target = target.split("/", 1)[1].split("@", 1)[0]
    parts = [PurePath(p).stem for p in PurePath(target).parts if p not in ("/", ".", "..")]
    meaningful = [p for p in parts if p.lower() not in _GENERIC_PARTS] or parts or ["mcp"]
    return _sanitize(meaningful[-1].rsplit(".", 1)[-1])


def _is_python(command: str) -> bool:
    return re.fullmatch(r"python[0-9.]*", PurePath(command).name) is not None


def _name_from_host(host: str) -> str:
    return _sanitize(host.replace(".", "_"))


def _sanitize(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")
    return cleaned or "mcp"
