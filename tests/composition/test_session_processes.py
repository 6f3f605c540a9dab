"""Turns of one session in several OS processes sharing a store: none is ever lost.

Each turn is a `session_worker` subprocess against one SQLite file or one PostgreSQL
schema; the session's lease in the store makes a second process's turn wait for the
first and continue from its stored result.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ponder.exceptions import UserError
from ponder.store import open_store
from tests.composition.session_worker import build
from tests.store.conftest import PG_DSN, drop_schema, isolated_schema, postgres_available

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.sqlite3'}"
        return
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema = isolated_schema()
    yield f"{PG_DSN}?options=-csearch_path%3D{schema}"
    drop_schema(schema)


class Turns:
    """Starts the turns of one session as subprocesses."""

    def __init__(self, url: str, markers: Path) -> None:
        self.url, self.markers, self.session = url, markers, f"s-{os.urandom(4).hex()}"

    def start(
        self, prompt: str, hold: float = 0.0, wait: float = 120.0, go: Path | None = None
    ) -> subprocess.Popen[str]:
        """The turn of ``prompt`` in a new process; with ``go``, it starts once that exists."""
        args = [sys.executable, "-m", "tests.composition.session_worker", self.url]
        args += [self.session, prompt, str(self.markers), str(hold)]
        env = {**os.environ, "TURN_WAIT": str(wait), "GO_FILE": str(go or "")}
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)

    def run(self, prompt: str, hold: float = 0.0, wait: float = 120.0) -> dict[str, Any]:
        return outcome(self.start(prompt, hold, wait))

    def wait_started(self, prompt: str, turn: subprocess.Popen[str]) -> None:
        """Wait until the turn of ``prompt`` is in its tool, holding the session."""
        marker = self.markers / f"{prompt}.started"
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert turn.poll() is None, "the turn ended before it held the session"
            assert time.monotonic() < deadline, "the turn never started"
            time.sleep(0.05)


def outcome(turn: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = turn.communicate(timeout=180)
    assert turn.returncode == 0
    found: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return found


@pytest.fixture
def turns(store_url: str, tmp_path: Path) -> Turns:
    return Turns(store_url, tmp_path)


def test_a_turn_in_another_process_waits_and_continues_the_first(turns: Turns) -> None:
    assert turns.run("T0") == {"status": "completed", "turns": ["T0"]}
    go = turns.markers / "B.go"
    second = turns.start("B", go=go)  # its interpreter starts up meanwhile
    first = turns.start("A", hold=1.0)
    turns.wait_started("A", first)  # A holds the session: B must come after it
    go.touch()  # B's turn starts while A's is in its tool
    assert outcome(first) == {"status": "completed", "turns": ["T0", "A"]}
    assert outcome(second) == {"status": "completed", "turns": ["T0", "A", "B"]}
    assert turns.run("C")["turns"] == ["T0", "A", "B", "C"]  # nothing lost


def test_a_turn_killed_mid_turn_is_taken_over_by_the_next(turns: Turns) -> None:
    turns.run("T0")
    killed = turns.start("A", hold=600.0)
    turns.wait_started("A", killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    killed_turn = asyncio.run(latest_turn(turns))
    # a dead holder on this host is taken over at once, long before its lease would expire
    after = turns.run("B", wait=60.0)
    assert after == {"status": "completed", "turns": ["T0", "B"]}  # A never completed
    with pytest.raises(UserError, match="has gone on since"):  # finishing A would drop B
        asyncio.run(resume(turns, killed_turn))
    assert turns.run("C")["turns"] == ["T0", "B", "C"]


async def latest_turn(turns: Turns) -> str:
    store = open_store(turns.url)
    try:
        found = await store.latest_turn(turns.session)
    finally:
        await store.close()
    assert found is not None and found.status == "running"
    return found.run_id


async def resume(turns: Turns, run_id: str) -> None:
    store = open_store(turns.url)
    try:
        await build(turns.markers, "A", 0.0).resume(run_id, store=store)
    finally:
        await store.close()


def test_a_turn_that_waits_too_long_is_refused_naming_the_holder(turns: Turns) -> None:
    holder = turns.start("A", hold=600.0)
    try:
        turns.wait_started("A", holder)
        refused = turns.run("B", wait=0.5)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert refused["error"] == "SessionLeaseError"
    assert f"session {turns.session!r}" in refused["message"]
    assert f":{holder.pid}:" in refused["message"]  # the holder's host:pid:nonce
    assert "Store.turn_wait_seconds" in refused["message"]
