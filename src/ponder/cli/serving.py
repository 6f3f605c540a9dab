"""What ``ponder serve`` decides before it listens: its token, the Host names, its banner."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable
from typing import Annotated

import typer

from ponder.exceptions import UserError

__all__ = [
    "DrainTimeoutOption",
    "MaxConnectionsOption",
    "NoTokenOption",
    "RequestTimeoutOption",
    "ResumeRunsOption",
    "TokenOption",
    "UnsafeConfigOption",
    "allowed_hosts",
    "announcer",
    "is_loopback",
    "server_token",
]

TokenOption = Annotated[
    str | None,
    typer.Option(
        envvar="PONDER_SERVER_TOKEN",
        help="Bearer token clients must send (default: a random one, printed).",
    ),
]
NoTokenOption = Annotated[
    bool, typer.Option("--no-token", help="Require no token (loopback only; unsafe).")
]
UnsafeConfigOption = Annotated[
    bool,
    typer.Option(
        "--allow-unsafe-config",
        help="Let /v1/config change MCP servers, base_url and other keys that start "
        "processes, reach the network or read files.",
    ),
]
ResumeRunsOption = Annotated[
    bool, typer.Option(help="On start, resume the store's runs a stop or a crash interrupted.")
]
DrainTimeoutOption = Annotated[
    float,
    typer.Option(
        min=0, help="Seconds a stop lets running tool calls finish before it interrupts them."
    ),
]
RequestTimeoutOption = Annotated[
    float,
    typer.Option(
        min=0.1, help="Seconds a connection may stay open without a request before it is closed."
    ),
]
MaxConnectionsOption = Annotated[
    int,
    typer.Option(
        min=1, help="Connections served at once (at most half the open-file limit); more get 503."
    ),
]


def server_token(token: str | None, no_token: bool, host: str) -> tuple[str | None, bool]:
    """The bearer token to require, and whether it was made up here (so it is shown).

    Without ``--token`` (or ``PONDER_SERVER_TOKEN``) a random one is made on loopback:
    any local process could otherwise drive the server; another address needs one given.
    ``--no-token`` turns the token off, on a loopback address only.
    """
    if no_token:
        if token:
            raise UserError("--no-token and --token (or PONDER_SERVER_TOKEN) contradict each other")
        if not is_loopback(host):
            raise UserError(f"binding to {host} needs a bearer token: --no-token is for loopback")
        return None, False
    if token is not None and not token.strip():
        raise UserError("the bearer token is empty: pass a non-empty --token, or --no-token")
    if not token and not is_loopback(host):
        raise UserError(
            f"binding to {host} needs a bearer token: pass --token <secret> or set "
            "PONDER_SERVER_TOKEN"
        )
    return (token, False) if token else (secrets.token_urlsafe(24), True)


def announcer(host: str, port: int, token: str | None, *, show: bool) -> Callable[[], None]:
    """What ``ponder serve`` prints once it listens: where the API and the viewer are.

    A token made up by the server is printed (like Jupyter's): the viewer address carries
    it in its fragment, which browsers never send to the server or write to its log.
    """
    shown = f"[{host}]" if ":" in host else host

    def announce() -> None:
        base = f"http://{shown}:{port}"
        typer.echo(f"ponder serve: the API at {base}/v1, the viewer at {base}/")
        if token and show:
            typer.echo(f"open the viewer at {base}/#token={token}")
            typer.echo(f"clients send 'Authorization: Bearer {token}'")
        elif token:
            typer.echo("clients send 'Authorization: Bearer <token>'; the viewer asks for it")
        else:
            typer.echo("no token (--no-token): any local process can use this server")
        typer.echo("Ctrl-C stops the server (runs in a store stop resumably)")

    return announce


def is_loopback(host: str) -> bool:
    """A loopback address or ``localhost``; a name that merely starts with ``127.`` is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, extra: list[str] | None) -> list[str]:
    """The ``Host`` names to serve: the bound address (and localhost names) plus ``extra``."""
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    names = {host, f"[{host}]"} if ":" in host else {host}
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return sorted(names | set(extra or ()))
