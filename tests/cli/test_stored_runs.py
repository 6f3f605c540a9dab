"""Stored runs are first-class: resumed without flags, found by prefix, shown by the server.

Runs are made by ``ponder run --store`` in a subprocess; the server reads the same store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ponder.agent import Agent
from ponder.models import ScriptedModel
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from ponder.testing import FakeOpenAIServer

from ..server.live import live_server, sse_events
from .test_runs import Cli, publisher


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    with FakeOpenAIServer(publisher) as provider:
        yield Cli(provider, tmp_path)


def store_path(cli: Cli) -> Path:
    return Path(cli.store.removeprefix("sqlite:///"))


def test_resume_needs_no_flags_and_takes_a_prefix(cli: Cli) -> None:
    run_id, _ = cli.start()
    prefix = run_id[:8]
    shown = cli.json("runs", "show", prefix, "--store", cli.store)
    assert shown["id"] == run_id and shown["status"] == "suspended"
    resumed = cli("runs", "resume", prefix, "--store", cli.store, "--approve")
    assert resumed.returncode == 0, resumed.stderr
    assert "Done: published 'report'" in resumed.stdout
    assert cli.published() == ["report"]


def test_a_resume_without_the_pending_calls_tool_is_refused_and_changes_nothing(
    cli: Cli,
) -> None:
    run_id, _ = cli.start()
    other = "tests.cli.approval_tools:OTHER_TOOLS"
    args = ("runs", "resume", run_id, "--store", cli.store)
    refused = cli(*args, "--tools", other, "--approve")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "'publish'" in refused.stderr and "does not offer" in refused.stderr
    assert cli.json("runs", "show", run_id, "--store", cli.store)["status"] == "suspended"
    assert cli.published() == []
    resumed = cli(*args, "--approve")  # the recorded tools: the approval was not used up
    assert resumed.returncode == 0, resumed.stderr
    assert cli.published() == ["report"]


def test_an_ambiguous_or_unknown_prefix_is_refused(cli: Cli) -> None:
    store = SQLiteStore(store_path(cli))

    async def make() -> None:
        agent = Agent(ScriptedModel(["one", "two"]), agent_strategy="no-action")
        for run_id in ("abc1", "abc2"):
            await agent.run("task", run_id=run_id, store=store)
        await store.close()

    asyncio.run(make())
    for command in ("show", "cancel"):
        ambiguous = cli("runs", command, "abc", "--store", cli.store)
        assert ambiguous.returncode == 2
        assert "ambiguous" in ambiguous.stderr and "abc1, abc2" in ambiguous.stderr
    unknown = cli("runs", "show", "zzz", "--store", cli.store)
    assert unknown.returncode == 2 and "no stored run" in unknown.stderr
    assert cli.json("runs", "show", "abc2", "--store", cli.store)["status"] == "completed"


def test_the_server_shows_and_replays_a_run_made_by_the_cli(cli: Cli) -> None:
    run_id, _ = cli.start()
    resumed = cli("runs", "resume", run_id[:8], "--store", cli.store, "--approve")
    assert resumed.returncode == 0, resumed.stderr
    store = SQLiteStore(store_path(cli))
    with live_server(create_app(Agent(ScriptedModel([])), store=store)) as server:
        run = httpx.get(f"{server.url}/v1/runs/{run_id[:8]}").json()
        assert run["id"] == run_id and run["status"] == "completed"
        assert run["output"] == "Done: published 'report'"
        assert run["stop_reason"] == "answered_without_stop" and run["usage"]["requests"] == 3
        url = f"{server.url}/v1/runs/{run_id}/events"
        with httpx.stream("GET", url, timeout=30) as response:
            events = list(sse_events(response.iter_lines()))
        kinds = [e["event"] for e in events]
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
        assert {"run_suspended", "run_resumed", "tool_call_finished"} <= set(kinds)
        assert json.loads(events[-1]["data"])["output"] == "Done: published 'report'"
        seqs = [int(e["id"]) for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        again = httpx.get(url, headers={"Last-Event-ID": events[-1]["id"]}, timeout=30)
        assert again.status_code == 204  # EventSource stops reconnecting
        middle = httpx.get(url, headers={"Last-Event-ID": events[-3]["id"]}, timeout=30)
        assert [f["event"] for f in sse_events(iter(middle.text.splitlines()))] == kinds[-2:]
