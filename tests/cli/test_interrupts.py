"""Ctrl-C (SIGINT) in ``ponder run --store``: the first interrupts resumably, the second
cancels; both through the real command in a subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .test_commands import PONDER, ROOT, environment, ponder

TOOLS = "tests.cli.gate_tools:TOOLS"


def call(name: str, **arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])


SCRIPT = [
    call("think_and_reason", last_step="", summary="Pass the gate."),
    call("wait_at_gate", label="first"),
    call("think_and_reason", last_step="passed", summary="Answer now."),
    call("agent_stop", result="through"),
    FakeReply(content="Through the gate."),
]


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(SCRIPT) as server:
        yield server


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def read_until(stream: IO[str], needle: str) -> list[str]:
    lines: list[str] = []
    while needle not in (line := stream.readline()):
        assert line, f"the output ended before {needle!r}: {lines}"
        lines.append(line)
    return [*lines, line]


def start_run(provider: FakeOpenAIServer, store: str, gate: Path) -> subprocess.Popen[str]:
    env = environment(OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY="k", GATE_DIR=str(gate))
    command = [PONDER, "run", "--model", "openai:gpt-4o-mini", "--tools", TOOLS]
    return subprocess.Popen(
        [*command, "--store", store, "--json", "pass the gate"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def stored_status(store: str) -> str:
    listed = ponder("runs", "list", "--store", store, "--json")
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)["runs"]
    return str(run["status"])


def test_ctrl_c_waits_for_the_running_call_then_leaves_the_run_resumable(
    provider: FakeOpenAIServer, tmp_path: Path
) -> None:
    store, gate = f"sqlite:///{tmp_path / 'runs.db'}", tmp_path
    process = start_run(provider, store, gate)
    assert process.stderr is not None and process.stdout is not None
    wait_for(gate / "started")
    process.send_signal(signal.SIGINT)
    read_until(process.stderr, "interrupting: waiting for 1 running tool call(s)")
    (gate / "open").touch()
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err + out
    last = json.loads(out.splitlines()[-1])
    assert last["kind"] == "run_cancelled" and last["resumable"] is True
    run_id = last["run_id"]
    assert f"run {run_id} interrupted" in err
    assert f"resume with: ponder runs resume {run_id} --store {store}" in err
    assert stored_status(store) == "interrupted"

    resumed = ponder(
        "runs",
        "resume",
        run_id,
        "--store",
        store,
        "--model",
        "openai:gpt-4o-mini",
        "--tools",
        TOOLS,
        "--json",
        OPENAI_BASE_URL=provider.base_url,
        OPENAI_API_KEY="k",
        GATE_DIR=str(gate),
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["output"] == "Through the gate."
    assert (gate / "started").read_text() == "first\n"  # the finished call was not redone
    assert stored_status(store) == "completed"


def test_a_second_ctrl_c_cancels_the_run_for_good(
    provider: FakeOpenAIServer, tmp_path: Path
) -> None:
    store, gate = f"sqlite:///{tmp_path / 'runs.db'}", tmp_path
    process = start_run(provider, store, gate)
    assert process.stderr is not None
    wait_for(gate / "started")
    process.send_signal(signal.SIGINT)
    read_until(process.stderr, "press Ctrl-C again to cancel it")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    (gate / "open").touch()
    assert process.returncode == 130, err
    last = json.loads(out.splitlines()[-1])
    assert last["kind"] == "run_cancelled" and last["resumable"] is False
    assert "cancelled" in err and "resume with" not in err
    assert stored_status(store) == "cancelled"
    refused = ponder("runs", "resume", last["run_id"], "--store", store, "--model", "scripted")
    assert refused.returncode == 2
    assert "was cancelled" in refused.stderr
