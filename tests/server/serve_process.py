"""``ponder serve`` as a real subprocess on a store, with a fake provider and slow steps.

Each run of the scripted task calls ``step`` ``STEPS`` times (each call takes a moment and
leaves a line in the step log), then answers. A test starts runs, stops or kills the
server, starts it again and reads the store and the step log.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.store import open_store
from ponder.testing import FakeReply, FakeToolCall
from tests.cli.test_commands import PONDER, ROOT, environment, free_port
from tests.store.conftest import PG_DSN, postgres_available

STEPS = 4
TOKEN = "test-token-for-the-serve-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def stepper(body: dict[str, Any]) -> FakeReply:
    """Call ``step`` with the next number until ``STEPS`` results are in, then answer."""
    label = str(body["messages"][-1]["content"]) if body["messages"] else ""
    users = [m for m in body["messages"] if m["role"] == "user"]
    label = str(users[0]["content"]) if users else label
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done < STEPS:
        arguments = {"label": label, "n": done + 1}
        return FakeReply(tool_calls=[FakeToolCall(name="step", arguments=arguments, id=f"s{done}")])
    return FakeReply(content=f"finished {label}")


def store_url(backend: str, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    return PG_DSN


class Serve:
    """One ``ponder serve --store`` process at a time on a fixed port; logs to files."""

    def __init__(
        self,
        store: str,
        provider_url: str,
        tmp_path: Path,
        *,
        tools: str = "tests.server.stop_tools:TOOLS",
        **env: str,
    ) -> None:
        self.store, self.tmp_path, self.tools = store, tmp_path, tools
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.step_log = tmp_path / "steps.log"
        self.step_log.touch()
        self.env = environment(
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=provider_url,
            PONDER_AGENT_THOUGHT_MODE="chat",
            STEP_LOG=str(self.step_log),
            **env,
        )
        self.process: subprocess.Popen[str] | None = None
        self.starts = 0

    def start(self, *extra: str) -> Serve:
        self.starts += 1
        out = (self.tmp_path / f"serve-{self.starts}.out").open("w")
        command = [PONDER, "serve", "--port", str(self.port), "-m", "openai:m", "--token", TOKEN]
        tools = ["--tools", self.tools, "--store", self.store]
        self.process = subprocess.Popen(
            [*command, *tools, *extra],
            env=self.env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/v1/runs", headers=AUTH).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)

    def close(self) -> None:
        """Kill the server if a test left it running (a failed assertion)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None

    def output(self) -> str:
        return (self.tmp_path / f"serve-{self.starts}.out").read_text()

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        code = self.process.wait(timeout=90)
        self.process = None
        return code

    def post(self, prompt: str) -> httpx.Response:
        return httpx.post(f"{self.url}/v1/runs", json={"prompt": prompt}, headers=AUTH, timeout=30)

    def run(self, run_id: str) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/v1/runs/{run_id}", headers=AUTH, timeout=30)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def wait_done(self, run_ids: list[str], timeout: float = 120) -> dict[str, dict[str, Any]]:
        """Each run's summary once none is running any more."""
        deadline = time.monotonic() + timeout
        while True:
            runs = {run_id: self.run(run_id) for run_id in run_ids}
            if all(r["status"] not in ("running",) for r in runs.values()):
                return runs
            assert time.monotonic() < deadline, {k: v["status"] for k, v in runs.items()}
            time.sleep(0.1)

    def steps(self) -> list[str]:
        return self.step_log.read_text().splitlines()

    def wait_steps(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.steps()) < count:
            assert time.monotonic() < deadline, self.steps()
            time.sleep(0.05)

    def stored_statuses(self, run_ids: list[str]) -> dict[str, str]:
        async def read() -> dict[str, str]:
            store = open_store(self.store)
            try:
                return {r: (await store.load(r)).record.status for r in run_ids}
            finally:
                await store.close()

        return asyncio.run(read())
