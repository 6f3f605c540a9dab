"""``ponder serve`` bounds its connections: idle ones cannot starve a request or flood the log.

The server is a real subprocess with a small open-file limit (128), so a couple of
hundred idle sockets are more than it could hold: without a request deadline and a cap,
it stopped accepting connections for good and logged every failed accept.
"""

from __future__ import annotations

import resource
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.cli.test_commands import PONDER, ROOT, environment, free_port

from .serve_process import AUTH, TOKEN

IDLE = 200
FILE_LIMIT = 128


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


@dataclass
class Served:
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port, log = free_port(), tmp_path / "serve.out"
    command = [PONDER, "serve", "--port", str(port), "-m", "openai:m", "--token", TOKEN]
    with log.open("w") as out:
        process = subprocess.Popen(
            [*command, "--request-timeout", "2"],
            env=environment(OPENAI_API_KEY="k"),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_limit_files,
        )
    try:
        served = Served(port, log)
        assert answer(served, deadline=60).status_code == 200, log.read_text()
        yield served
    finally:
        process.terminate()
        process.wait(timeout=30)


def answer(served: Served, deadline: float) -> httpx.Response:
    """The first answer to ``GET /v1/runs`` that is not a 503, asking until ``deadline`` s."""
    end = time.monotonic() + deadline
    while True:
        try:
            response = httpx.get(f"{served.url}/v1/runs", headers=AUTH, timeout=5)
            if response.status_code != 503:
                return response
        except httpx.TransportError:
            pass
        assert time.monotonic() < end, "no answer: " + served.log.read_text()[-2000:]
        time.sleep(0.2)


def test_idle_connections_do_not_keep_a_request_from_being_answered(served: Served) -> None:
    idle = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(IDLE)]
    try:
        assert answer(served, deadline=60).status_code == 200
    finally:
        for sock in idle:
            sock.close()
    assert served.log.stat().st_size < 100_000  # no line per failed accept


def test_a_request_that_never_finishes_its_headers_is_closed(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
        sock.settimeout(60)
        assert sock.recv(1024) == b""  # closed by the server, not answered


def test_a_connection_past_the_cap_gets_a_503_at_once(served: Served) -> None:
    held = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(FILE_LIMIT)]
    try:
        with socket.create_connection(("127.0.0.1", served.port)) as extra:
            extra.settimeout(60)
            assert extra.recv(1024).startswith(b"HTTP/1.1 503")
    finally:
        for sock in held:
            sock.close()
