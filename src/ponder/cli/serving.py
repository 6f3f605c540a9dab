"""What ``ponder serve`` decides before it listens: loopback, the Host names, its banner."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import typer

__all__ = ["allowed_hosts", "announcer", "is_loopback"]


def announcer(host: str, port: int, token: str | None) -> Callable[[], None]:
    """What ``ponder serve`` prints once it listens: where the API and the viewer are."""
    shown = f"[{host}]" if ":" in host else host

    def announce() -> None:
        base = f"http://{shown}:{port}"
        typer.echo(f"ponder serve: the API at {base}/v1, the viewer at {base}/")
        if token:
            typer.echo("clients send 'Authorization: Bearer <token>'; the viewer asks for it")
        typer.echo("Ctrl-C stops the server")

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
