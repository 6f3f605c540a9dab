"""Fixtures for the MCP client tests: fixture servers and process counting."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SERVER = FIXTURES / "mcp_server.py"
RAW_SERVER = FIXTURES / "raw_mcp_server.py"


def stdio_entry(*args: str) -> str:
    """A `stdio://[...]` entry that runs the Python fixture server over stdio."""
    import json

    return "stdio://" + json.dumps([sys.executable, str(SERVER), "stdio", *args])


def raw_entry(mode: str) -> dict[str, Any]:
    """A structured entry for the misbehaving raw server."""
    return {"name": f"raw_{mode}", "command": [sys.executable, str(RAW_SERVER), mode]}


def descendants(pid: int | None = None) -> set[int]:
    """Live (non-zombie-reaped included) descendant process ids of ``pid`` (default: us)."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def kill_stdio_servers(before: set[int]) -> list[int]:
    """SIGKILL every descendant that appeared since ``before``; their ids."""
    new = sorted(descendants() - before)
    for pid in new:
        os.kill(pid, 9)
    return new


class HTTPServer:
    """The Python fixture server running over streamable HTTP in a subprocess."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"the fixture HTTP server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def http_server() -> Iterator[HTTPServer]:
    server = HTTPServer("--name", "web")
    yield server
    server.stop()


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return []
