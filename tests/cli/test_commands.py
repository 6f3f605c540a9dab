"""Every ``ponder`` command through the real entry point (a subprocess), errors included."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.support.golden import assert_golden

PONDER = str(Path(sys.executable).with_name("ponder"))
ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PONDER_"))}
    env.update(COLUMNS="100", NO_COLOR="1", PYTHONPATH=str(ROOT), **extra)
    return env


def ponder(
    *args: str, stdin: str = "", timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PONDER, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(**env),
        cwd=ROOT,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("error: ") and "(hint: " in lines[0]
    return lines[0]


def agent_script() -> list[FakeReply]:
    def call(name: str, **arguments: Any) -> FakeReply:
        return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])

    return [
        call("think_and_reason", last_step="", summary="Think it through once."),
        call(
            "sequential_thinking",
            thought="Only one step is needed.",
            thought_number=1,
            total_thoughts=1,
            next_thought_needed=False,
        ),
        call("think_and_reason", last_step="thought", summary="Ready to answer."),
        call("agent_stop", result="done"),
        FakeReply(content="Final answer from the provider.", input_tokens=11, output_tokens=5),
    ]


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(agent_script()) as server:
        yield server


def test_help_lists_every_command() -> None:
    result = ponder("--help")
    assert result.returncode == 0
    for command in ("run", "chat", "demo", "dis", "serve", "index", "runs", "mcp"):
        assert command in result.stdout


def test_run_shows_the_live_view_against_a_real_provider(provider: FakeOpenAIServer) -> None:
    result = ponder(
        "run",
        "What is the answer?",
        "--model",
        "openai:fake-model",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=provider.base_url,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "✓ completed" in out and "model openai:fake-model" in out
    assert "thinking  1/1" in out and "Only one step is needed." in out
    assert "Final answer from the provider." in out
    assert "tokens  in " in out
    assert len(provider.requests) == 5
    assert provider.requests[0]["tool_choice"]["function"]["name"] == "think_and_reason"


def test_run_json_prints_one_event_per_line(provider: FakeOpenAIServer) -> None:
    result = ponder(
        "run",
        "What is the answer?",
        "--json",
        "-m",
        "openai:fake-model",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=provider.base_url,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("reasoning") == 2 and kinds.count("thinking") == 1
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["output"] == "Final answer from the provider."


def test_run_reads_the_model_from_a_config_file(provider: FakeOpenAIServer, tmp_path: Path) -> None:
    config = tmp_path / "ponder.toml"
    config.write_text(
        f'model = "openai:fake-model"\nbase_url = "{provider.base_url}"\napi_key = "k"\n'
    )
    result = ponder("run", "Go", "--config", str(config), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["kind"] == "run_finished"


def test_missing_api_key_is_one_line_with_a_hint() -> None:
    result = ponder("run", "hi", "--model", "openai:gpt-4o-mini")
    assert result.returncode == 2
    line = one_line_error(result)
    assert "no API key for openai" in line and "export OPENAI_API_KEY=" in line
    assert result.stdout == ""


def test_unreachable_base_url_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = ponder(
        "run", "hi", "-m", "openai:gpt-4o-mini", OPENAI_API_KEY="k", OPENAI_BASE_URL=url
    )
    assert result.returncode == 1
    assert f"cannot reach the model at {url}" in one_line_error(result)


def test_rejected_key_is_reported(provider: FakeOpenAIServer) -> None:
    with FakeOpenAIServer([FakeReply(status=401, error_message="bad key")]) as refusing:
        result = ponder(
            "run", "hi", "-m", "openai:m", OPENAI_API_KEY="k", OPENAI_BASE_URL=refusing.base_url
        )
    assert result.returncode == 1
    assert "refused the API key (HTTP 401)" in one_line_error(result)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "hi"], "no model given"),
        (["run", "hi", "-m", "nosuch:model"], "unknown model provider 'nosuch'"),
        (["run", "hi", "-m", "scripted", "--workflow", "sideways"], "agent_workflow"),
        (["run", "hi", "-m", "scripted", "--config", "/nonexistent/ponder.toml"], "cannot read"),
        (["demo", "--delay", "-1"], "--delay must be 0 or more"),
        (["dis", "nosuch_module_xyz:thing"], "cannot load 'nosuch_module_xyz:thing'"),
        (["dis", "tests.cli.programs:NOT_A_PROGRAM"], "is not a Program or a block"),
        (["dis", "justaword"], "give react, step-react, run or module:attribute"),
        (["serve", "--host", "0.0.0.0", "-m", "scripted"], "needs a bearer token"),
        (["serve", "--port", "70000", "-m", "scripted"], "out of range"),
    ],
)
def test_misuse_is_one_line_and_exit_code_2(args: list[str], fragment: str) -> None:
    result = ponder(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert fragment in one_line_error(result)


def test_invalid_config_file_is_reported(tmp_path: Path) -> None:
    config = tmp_path / "ponder.toml"
    config.write_text("model = [unclosed\n")
    result = ponder("run", "hi", "--config", str(config))
    assert result.returncode == 2
    assert "not valid TOML" in one_line_error(result)
    config.write_text('model = "scripted"\nagent_tool_call_limit = -3\n')
    result = ponder("run", "hi", "--config", str(config))
    assert "agent_tool_call_limit" in one_line_error(result)


def test_demo_runs_offline_with_the_whole_story() -> None:
    result = ponder("demo", "--delay", "0")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "✓ completed" in out and "stop: answered" in out
    assert "thinking  4/4 · 1 branch(es) · 1 revision(s)" in out
    assert "⑂ branch feels-like" in out and "(superseded)" in out and "↻ revises 2" in out
    assert out.count("✓  current_temperature") == 2
    assert "│ Lisbon is warmer: it is 17 °C there and -3 °C in Oslo" in out
    assert "tokens  in " in out


def test_demo_json_streams_the_answer() -> None:
    result = ponder("demo", "--delay", "0", "--json")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    started = [
        e["arguments"]["city"]
        for e in events
        if e["kind"] == "tool_call_started" and e["name"] == "current_temperature"
    ]
    assert started == ["Lisbon", "Oslo"]
    deltas = [e["text"] for e in events if e["kind"] == "text_delta"]
    assert len(deltas) > 3 and "".join(deltas) == events[-1]["output"]


def test_chat_keeps_the_conversation(tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> FakeReply:
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            return FakeReply(
                tool_calls=[FakeToolCall(name="think_and_reason", arguments={"summary": "answer"})]
            )
        if choice == "required":
            return FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        users = [u for u in users if not u.startswith("<BEGIN_OF")]
        return FakeReply(content=f"answer {len(users)} to {users[-1]}")

    with FakeOpenAIServer(answer) as server:
        result = ponder(
            "chat",
            "-m",
            "openai:m",
            "--json",
            stdin="first question\nsecond question\n",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
        )
        requests = server.requests
    assert result.returncode == 0, result.stderr
    events = [json.loads(x) for x in result.stdout.splitlines()]
    streamed = "".join(e["text"] for e in events if e["kind"] == "text_delta")
    assert streamed == "answer 1 to first questionanswer 2 to second question"
    finished = [json.loads(x) for x in result.stdout.splitlines() if '"run_finished"' in x]
    assert [e["output"] for e in finished] == [
        "answer 1 to first question",
        "answer 2 to second question",
    ]
    second = [(m["role"], m["content"]) for m in requests[-1]["messages"] if m["role"] != "system"]
    assert ("user", "first question") in second
    assert ("assistant", "answer 1 to first question") in second


def test_chat_shows_the_view_without_json() -> None:
    result = ponder("chat", "-m", "scripted", stdin="hello there\n\n")
    assert result.returncode == 0, result.stderr
    assert "✓ completed" in result.stdout and "hello there" in result.stdout


def test_dis_prints_builtin_and_user_programs() -> None:
    result = ponder("dis")
    assert result.returncode == 0, result.stderr
    assert_golden(result.stdout, GOLDEN / "dis_builtin.txt")
    step = ponder("dis", "step-react")
    assert step.returncode == 0, step.stderr
    assert_golden(step.stdout, GOLDEN / "dis_step_react.txt")
    listed = ponder("dis", "--list")
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [
        "react",
        "step-react",
        "run",
    ]
    user = ponder("dis", "tests.cli.programs:PROGRAM", "tests.cli.programs:BLOCK")
    assert user.returncode == 0, user.stderr
    assert_golden(user.stdout, GOLDEN / "dis_user.txt")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_answers_and_stops_cleanly_on_ctrl_c() -> None:
    port = free_port()
    process = subprocess.Popen(
        [PONDER, "serve", "--port", str(port), "--no-token", "-m", "scripted"],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/v1/runs").status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, process.stderr
                time.sleep(0.05)
        run_id = httpx.post(url + "/v1/runs", json={"prompt": "echo me"}).json()["id"]
        events = httpx.get(f"{url}/v1/runs/{run_id}/events", timeout=30).text
        assert "event: run_finished" in events and "echo me" in events
    finally:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert f"the viewer at http://127.0.0.1:{port}/" in stdout
    assert '"POST /v1/runs HTTP/1.1" 201' in stdout  # one access line per request


def test_ctrl_c_stops_a_run_cleanly() -> None:
    with FakeOpenAIServer([FakeReply(content="late", delay=60)]) as slow:
        process = subprocess.Popen(
            [PONDER, "run", "hi", "-m", "openai:m"],
            env=environment(OPENAI_API_KEY="k", OPENAI_BASE_URL=slow.base_url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 30
        while not slow.requests:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr.strip() == "interrupted"


def test_mcp_thinking_serves_over_stdio() -> None:
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "sequentialthinking",
                "arguments": {
                    "thought": "a thought",
                    "nextThoughtNeeded": False,
                    "thoughtNumber": 1,
                    "totalThoughts": 1,
                },
            },
        },
    ]
    process = subprocess.Popen(
        [PONDER, "mcp", "thinking"],
        env=environment(DISABLE_THOUGHT_LOGGING="true"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, Any] = {}
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            while message["id"] not in answers:
                reply = json.loads(process.stdout.readline())
                answers[reply.get("id")] = reply
    process.stdin.close()
    process.wait(timeout=30)
    assert answers[1]["result"]["serverInfo"]["name"].endswith("sequential-thinking")
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["sequentialthinking"]
    assert answers[3]["result"]["structuredContent"]["thoughtHistoryLength"] == 1
