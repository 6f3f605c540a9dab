"""Durable runs from the terminal: ``ponder run --store``, ``ponder runs ...``, ``ponder index``.

Every command runs through the real entry point in its own process, against the fake
OpenAI server and a SQLite store in ``tmp_path``; approval crosses processes.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .test_commands import PONDER, ROOT, environment, free_port, one_line_error, ponder

TOOLS = "tests.cli.approval_tools:TOOLS"


def publisher(body: dict[str, Any]) -> FakeReply:
    """Call ``publish`` once; answer in text once its result is in."""
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if not results:
        call = FakeToolCall(name="publish", arguments={"text": "report"}, id="p1")
        return FakeReply(tool_calls=[call])
    return FakeReply(content=f"Done: {results[-1]['content']}")


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(publisher) as server:
        yield server


class Cli:
    """``ponder`` with the provider's URL, a store in tmp_path and a call log."""

    def __init__(self, provider: FakeOpenAIServer, tmp_path: Path) -> None:
        self.store = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
        self.log = tmp_path / "published.log"
        self.env = {
            "OPENAI_API_KEY": "k",
            "OPENAI_BASE_URL": provider.base_url,
            "PONDER_AGENT_THOUGHT_MODE": "chat",
            "PUBLISH_LOG": str(self.log),
        }

    def __call__(self, *args: str) -> Any:
        return ponder(*args, stdin="", timeout=60, **self.env)

    def start(self, task: str = "Publish the report") -> tuple[str, Any]:
        """Start a run that suspends for approval; its id and the process result."""
        result = self("run", task, "-m", "openai:m", "--store", self.store, "--tools", TOOLS)
        assert result.returncode == 3, (result.stdout, result.stderr)
        listed = self.json("runs", "list", "--store", self.store)["runs"]
        return str(listed[0]["id"]), result

    def json(self, *args: str) -> Any:
        result = self(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def resume(self, run_id: str, *decision: str) -> Any:
        args = ("runs", "resume", run_id, "--store", self.store, "-m", "openai:m")
        return self(*args, "--tools", TOOLS, *decision)

    def published(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def cli(provider: FakeOpenAIServer, tmp_path: Path) -> Cli:
    return Cli(provider, tmp_path)


def tool_messages(shown: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in shown["conversation"] if m["kind"] == "tool"]


def test_suspend_for_approval_then_approve_in_another_process(cli: Cli) -> None:
    run_id, started = cli.start()
    out = started.stdout
    assert f"run {run_id} suspended · store {cli.store}" in out
    assert 'p1  publish({"text": "report"})' in out
    command = next(line for line in out.splitlines() if line.startswith("resume with: "))
    words = shlex.split(command.removeprefix("resume with: "))
    assert words[:4] == ["ponder", "runs", "resume", run_id] and words[-1] == "--approve"
    assert cli.published() == []

    shown = cli.json("runs", "show", run_id, "--store", cli.store)
    assert shown["status"] == "suspended" and shown["prompt"] == "Publish the report"
    assert shown["pending_calls"] == [
        {"id": "p1", "name": "publish", "arguments": {"text": "report"}}
    ]

    resumed = cli(*words[1:])  # the printed command, exactly as given
    assert resumed.returncode == 0, resumed.stderr
    assert "Done: published 'report'" in resumed.stdout
    assert f"run {run_id} completed" in resumed.stdout
    assert cli.published() == ["report"]

    shown = cli.json("runs", "show", run_id, "--store", cli.store)
    assert shown["status"] == "completed" and shown["pending_calls"] == []
    assert tool_messages(shown)[0]["content"] == "published 'report'"
    text = cli("runs", "show", run_id, "--store", cli.store).stdout
    assert "user       Publish the report" in text and "← publish [p1]" in text
    # resuming a finished run again runs nothing twice
    again = cli.resume(run_id, "--approve")
    assert again.returncode == 0 and "already completed" in again.stdout
    assert cli.published() == ["report"]


def test_reject_with_a_reason_and_edit_by_decision(cli: Cli) -> None:
    rejected_id, _ = cli.start()
    result = cli.resume(rejected_id, "--reject", "--reason", "not today")
    assert result.returncode == 0, result.stderr
    message = tool_messages(cli.json("runs", "show", rejected_id, "--store", cli.store))[0]
    assert message["is_error"] and message["content"].endswith("rejected this call: not today")

    edited_id, _ = cli.start()
    decision = json.dumps({"p1": {"action": "edit", "arguments": {"text": "final"}}})
    result = cli.resume(edited_id, "--decision", decision, "--json")
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert kinds[0] == "run_resumed" and kinds[-1] == "run_finished"
    assert cli.published() == ["final"]


def test_bad_resumes_are_refused_and_the_run_stays_resumable(cli: Cli) -> None:
    run_id, _ = cli.start()
    cases = [
        (("--decision", "{approve"), "--decision is not valid JSON"),
        (("--decision", "42"), "resume a run waiting for approval"),
        (("--decision", '{"zz": "approve"}'), "no decision for pending call(s): p1"),
        (("--decision", '{"p1": "maybe"}'), "decision for call 'p1' must be"),
        ((), "waits for approval of publish [p1]"),
        (("--approve", "--reject"), "give only one of"),
        (("--reason", "x"), "--reason goes with --reject"),
    ]
    for decision, fragment in cases:
        result = cli.resume(run_id, *decision)
        assert result.returncode == 2, (decision, result.stdout, result.stderr)
        assert fragment in one_line_error(result)
    assert cli.json("runs", "show", run_id, "--store", cli.store)["status"] == "suspended"
    assert cli.resume(run_id, "--approve").returncode == 0
    assert cli.published() == ["report"]


def test_cancel_stops_a_suspended_run_for_good(cli: Cli) -> None:
    run_id, _ = cli.start()
    result = cli("runs", "cancel", run_id, "--store", cli.store)
    assert result.returncode == 0 and "cancelled (was suspended)" in result.stdout
    refused = cli.resume(run_id, "--approve")
    assert refused.returncode == 2 and "was cancelled" in one_line_error(refused)
    listed = cli.json("runs", "list", "--store", cli.store, "--status", "cancelled")["runs"]
    assert [r["id"] for r in listed] == [run_id]
    assert cli.published() == []


def test_cancel_refuses_a_completed_run(cli: Cli) -> None:
    run_id, _ = cli.start()
    assert cli.resume(run_id, "--approve").returncode == 0
    result = cli("runs", "cancel", run_id, "--store", cli.store)
    assert result.returncode == 2 and "already completed" in one_line_error(result)


def test_list_and_prune(cli: Cli) -> None:
    empty = cli("runs", "list", "--store", cli.store)
    assert empty.returncode == 0 and empty.stdout.strip() == f"no runs in {cli.store}"
    ids = [cli.start(f"task {n}")[0] for n in range(3)]
    table = cli("runs", "list", "--store", cli.store).stdout
    assert all(run_id in table for run_id in ids) and "suspended" in table
    listed = cli.json("runs", "list", "--store", cli.store, "--limit", "2")["runs"]
    assert [r["id"] for r in listed] == ids[::-1][:2]
    kept = cli("runs", "prune", "--store", cli.store, "--older-than", "1d")
    assert kept.returncode == 0 and "pruned 0 run(s)" in kept.stdout
    pruned = cli("runs", "prune", "--store", cli.store, "--keep", "1")
    assert pruned.returncode == 0 and "pruned 2 run(s)" in pruned.stdout
    assert [r["id"] for r in cli.json("runs", "list", "--store", cli.store)["runs"]] == [ids[2]]


def test_the_store_comes_from_ponder_store(cli: Cli) -> None:
    cli.env["PONDER_STORE"] = cli.store
    result = cli("run", "Publish", "-m", "openai:m", "--tools", TOOLS)
    assert result.returncode == 3
    listed = cli.json("runs", "list")["runs"]
    assert len(listed) == 1 and listed[0]["status"] == "suspended"


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["runs", "show", "nope"], 2, "no stored run with id 'nope'"),
        (["runs", "resume", "nope", "-m", "scripted", "--approve"], 2, "no stored run"),
        (["runs", "cancel", "nope"], 2, "no stored run with id 'nope'"),
        (["runs", "prune", "--older-than", "7 days"], 2, "cannot read the duration '7 days'"),
        (["runs", "prune", "--older-than", "-3d"], 2, "cannot read the duration"),
        (["runs", "prune"], 2, "give --keep N and/or --older-than"),
        (["runs", "prune", "--keep", "-1"], 2, "--keep must be 0 or more"),
        (["runs", "list", "--status", "sleeping"], 2, "--status 'sleeping' is not one of"),
        (["runs", "list", "--limit", "0"], 2, "--limit must be 1 or more"),
        (
            ["run", "hi", "-m", "scripted", "--tools", "tests.cli.approval_tools:NOT_TOOLS"],
            2,
            "must name a list of tools",
        ),
        (["run", "hi", "-m", "scripted", "--tools", "no_such_module_q:TOOLS"], 2, "cannot load"),
        (["run", "hi", "-m", "scripted", "--rag", "/nonexistent/docs"], 2, "is not a folder"),
        (["index", "/nonexistent/docs"], 2, "not a folder"),
    ],
)
def test_misuse_is_one_line(cli: Cli, args: list[str], code: int, fragment: str) -> None:
    if args[0] == "runs":
        args = [*args, "--store", cli.store]
    result = cli(*args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert fragment in one_line_error(result)


@pytest.mark.parametrize(
    ("url", "code", "fragment"),
    [
        ("postgresql://ponder@127.0.0.1:1/none", 1, "cannot open the PostgreSQL store"),
        ("redis://127.0.0.1/0", 2, "unknown store URL 'redis://127.0.0.1/0'"),
        ("sqlite:////proc/no/such/dir/runs.db", 1, "cannot open the store"),
    ],
)
def test_unreachable_or_unknown_store_is_reported(url: str, code: int, fragment: str) -> None:
    for args in (["runs", "list", "--store", url], ["run", "hi", "-m", "scripted", "--store", url]):
        result = ponder(*args)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        assert fragment in one_line_error(result)


def test_index_then_answer_from_the_folder(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text("The harbour tide peaks at 14:20 on Tuesdays.\n")
    (docs / "bread.txt").write_text("Sourdough needs a starter fed daily.\n")
    result = ponder("index", str(docs))
    assert result.returncode == 0, result.stderr
    assert "2 file(s) added or changed, 2 chunk(s)" in result.stdout
    again = ponder("index", str(docs), "--db", str(tmp_path / "elsewhere.sqlite"), "--json")
    summary = json.loads(again.stdout)
    assert summary["chunks"] == 2 and summary["db"].endswith("elsewhere.sqlite")

    with FakeOpenAIServer([FakeReply(content="At 14:20.")]) as server:
        answered = ponder(
            "run",
            "When does the harbour tide peak?",
            "-m",
            "openai:m",
            "--rag",
            str(docs),
            "--json",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
        )
        request = server.requests[0]
    assert answered.returncode == 0, answered.stderr
    events = [json.loads(line) for line in answered.stdout.splitlines()]
    retrieval = next(e for e in events if e["kind"] == "retrieval")
    assert retrieval["sources"][0] == "tides.md#0"
    assert "tide peaks at 14:20" in request["messages"][0]["content"]
    assert "tools" not in request and events[-1]["output"] == "At 14:20."


def test_serve_with_the_store_approves_a_run_from_the_terminal(cli: Cli) -> None:
    run_id, _ = cli.start()
    port = free_port()
    command = [PONDER, "serve", "--port", str(port), "--no-token", "-m", "openai:m"]
    command += ["--tools", TOOLS]
    process = subprocess.Popen(
        [*command, "--store", cli.store],
        env=environment(**cli.env),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                listed = httpx.get(url + "/v1/runs").json()["runs"]
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
        assert [(r["id"], r["status"]) for r in listed] == [(run_id, "suspended")]
        calls = httpx.get(f"{url}/v1/runs/{run_id}").json()["suspension"]["payload"]["calls"]
        assert [c["name"] for c in calls] == ["publish"]
        resumed = httpx.post(f"{url}/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert resumed.status_code == 200, resumed.text
        events = httpx.get(f"{url}/v1/runs/{run_id}/events", timeout=30).text
        assert "event: run_finished" in events
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    shown = cli.json("runs", "show", run_id, "--store", cli.store)
    assert shown["status"] == "completed" and cli.published() == ["report"]
