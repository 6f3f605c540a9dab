"""Chaos: ``ponder serve --store`` stopped and killed in the middle of a burst of runs.

Everything is a real process: the fake provider (``python -m ponder.testing.fake_openai``,
playing a long script of tool calls and answers in whatever order the runs ask), and the
server, which is sent SIGTERM mid-burst, started again, sent SIGKILL mid-burst and started
once more. Every run a server accepted (201) must then be stored and end ``completed``,
and no tool effect may have happened twice. The interleaving differs from run to run;
what is asserted holds for every interleaving.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.store import open_store
from tests.server.serve_process import Serve

BURST = 12
"""Runs posted per burst; the signal goes out once half of them were accepted."""
POSTERS = 4
SCRIPT_REPLIES = 1200
"""Replies the provider has; runs end on an answer, about every second reply."""


def script() -> list[Any]:
    """A tool call (each with its own id), then an answer, and again."""
    replies: list[Any] = []
    for i in range(SCRIPT_REPLIES // 2):
        call = {"name": "effect", "arguments": {"n": i}, "id": f"call-{i}"}
        replies += [{"tool_calls": [call]}, f"done {i}"]
    return replies


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[str]:
    """The fake provider as a subprocess; its base URL."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script()))
    command = [sys.executable, "-m", "ponder.testing.fake_openai", "--port", "0"]
    with (tmp_path / "provider.err").open("w") as errors:
        process = subprocess.Popen(
            [*command, "--script", str(path)], stdout=subprocess.PIPE, stderr=errors, text=True
        )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def serve(provider: str, tmp_path: Path) -> Iterator[Serve]:
    effects = tmp_path / "effects.log"
    effects.touch()
    store = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    tools = "tests.chaos.chaos_tools:TOOLS"
    serve = Serve(store, provider, tmp_path, tools=tools, EFFECT_LOG=str(effects))
    yield serve
    serve.close()


def post(serve: Serve, prompt: str) -> str | None:
    """The run id if the server accepted the run; None if it refused or went away."""
    try:
        answer = serve.post(prompt)
    except httpx.TransportError:
        return None
    return answer.json()["id"] if answer.status_code in (201, 202) else None


def burst(serve: Serve, tag: str, sig: signal.Signals) -> list[str]:
    """Post ``BURST`` runs from several clients, sending ``sig`` halfway; the accepted ids."""
    with ThreadPoolExecutor(POSTERS) as pool:
        posted = [pool.submit(post, serve, f"{tag} {i}") for i in range(BURST)]
        deadline = time.monotonic() + 60
        while sum(1 for f in posted if f.done() and f.result()) < BURST // 2:
            assert time.monotonic() < deadline, "the server accepted too few runs"
            time.sleep(0.01)
        code = serve.stop(sig)
        accepted = [f.result() for f in posted]
    assert code == (0 if sig == signal.SIGTERM else -signal.SIGKILL), serve.output()
    return [run_id for run_id in accepted if run_id]


def wait_ended(serve: Serve, run_ids: list[str], timeout: float = 90) -> dict[str, str]:
    """Each run's status once every one has ended (interrupted ones wait to be resumed)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {run_id: serve.run(run_id)["status"] for run_id in run_ids}
        if set(found.values()) <= {"completed", "failed", "cancelled"}:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.2)


def explain(serve: Serve, stored: dict[str, str]) -> str:
    """What a failure needs: the runs not stored completed, their last events, the logs."""
    odd = [run_id for run_id, status in stored.items() if status != "completed"]

    async def events() -> dict[str, list[str]]:
        store = open_store(serve.store)
        try:
            return {r: [e["kind"] for e in await store.load_events(r)][-8:] for r in odd}
        finally:
            await store.close()

    logs = [
        (serve.tmp_path / f"serve-{n}.out").read_text()[-1500:] for n in range(1, serve.starts + 1)
    ]
    return "\n".join(
        [f"{r} {stored[r]}: {kinds}" for r, kinds in asyncio.run(events()).items()] + logs
    )


def test_every_accepted_run_completes_once_across_a_stop_and_a_kill(serve: Serve) -> None:
    serve.start("--drain-timeout", "1")
    accepted = burst(serve, "terminated", signal.SIGTERM)
    serve.start("--drain-timeout", "1")
    accepted += burst(serve, "killed", signal.SIGKILL)
    serve.start("--drain-timeout", "1")

    assert len(accepted) >= BURST  # half of each burst at least
    statuses = wait_ended(serve, accepted)
    assert set(statuses.values()) == {"completed"}, statuses
    assert serve.stop() == 0, serve.output()
    stored = serve.stored_statuses(accepted)
    assert set(stored.values()) == {"completed"}, explain(serve, stored)
    effects = Path(serve.env["EFFECT_LOG"]).read_text().splitlines()
    assert [line for line, seen in Counter(effects).items() if seen > 1] == []
