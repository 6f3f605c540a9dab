"""The command line's edges as a new user meets them: pipes, failures, model names, the
chat banner and prompt, help texts; through the real command in a subprocess or a pty."""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time
from pathlib import Path

from ponder.testing import FakeOpenAIServer

from .test_commands import PONDER, ROOT, agent_script, environment, one_line_error, ponder


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    process = subprocess.Popen(
        [PONDER, "demo", "--json", "--delay", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # as `| head -1` does
    assert process.wait(timeout=60) == 141
    assert b'"kind": "run_started"' in first
    assert process.stderr.read() == b""


def test_a_failed_run_states_its_error_once_and_no_pending_tokens() -> None:
    done = ponder(
        "run",
        "hi",
        "-m",
        "openai:gpt-4o",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        PONDER_MAX_RETRIES="0",
    )
    assert done.returncode == 1
    assert "cannot reach the model at http://127.0.0.1:9/v1" in one_line_error(done)
    assert "✗ failed" in done.stdout and "error" not in done.stdout
    assert "reported when the run ends" not in done.stdout
    assert "tokens  — (none reported)" in done.stdout


def test_a_model_name_without_its_provider_gets_the_model_string_suggested() -> None:
    for given, meant in (
        ("gpt-4o", "openai:gpt-4o"),
        ("claude-3-5-haiku", "anthropic:"),
        ("opneai:gpt-4o", "openai:gpt-4o"),
    ):
        done = ponder("run", "hi", "--model", given)
        assert done.returncode == 2
        assert f"did you mean '{meant}" in one_line_error(done)


def test_the_scripted_model_answers_with_the_task_in_every_mode() -> None:
    for mode in ("reasoning-required", "reasoning", "inline", "chat"):
        done = ponder("run", "hello there", "-m", "scripted", PONDER_AGENT_THOUGHT_MODE=mode)
        assert done.returncode == 0, done.stderr
        assert "stop: answered" in done.stdout and "hello there" in done.stdout


def test_base_url_and_api_key_reach_the_provider() -> None:
    with FakeOpenAIServer(agent_script()) as server:
        done = ponder(
            "run",
            "Go",
            "-m",
            "openai:fake-model",
            "--base-url",
            server.base_url,
            "--api-key",
            "sk-from-the-flag",
        )
    assert done.returncode == 0, done.stderr
    assert "Final answer from the provider." in done.stdout
    assert server.headers[0]["authorization"] == "Bearer sk-from-the-flag"


def test_the_chat_banners_command_continues_the_session_without_agent_options(
    tmp_path: Path,
) -> None:
    store = f"sqlite:///{tmp_path / 'my chats.db'}"
    first = ponder("chat", "-m", "scripted", "--store", store, stdin="first turn\n")
    assert first.returncode == 0, first.stderr
    found = re.search(r"continue it later with `([^`]+)`", first.stdout)
    assert found is not None, first.stdout
    command = shlex.split(found.group(1))
    assert command[:2] == ["ponder", "chat"] and "-m" not in command
    again = ponder(*command[1:], stdin="second turn\n")
    assert again.returncode == 0, again.stderr
    assert "chat with scripted" in again.stdout and "second turn" in again.stdout
    listed = ponder("runs", "list", "--store", store)
    assert listed.stdout.count("completed") == 2, listed.stdout


def test_ctrl_c_at_the_chat_prompt_ends_the_line_and_exits_130() -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [PONDER, "chat", "-m", "scripted"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env=environment(TERM="dumb"),
    )
    os.close(follower)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"you>" not in seen:
            assert time.monotonic() < deadline, seen
            if select.select([leader], [], [], 0.5)[0]:
                seen += os.read(leader, 4096)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
        while select.select([leader], [], [], 0.5)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    after_prompt = seen[seen.rindex(b"you>") :]
    assert after_prompt.replace(b"\r", b"").startswith(b"you> \n"), after_prompt


def test_help_shows_flags_without_a_value_type_and_the_mcp_servers_options() -> None:
    run_help = ponder("run", "--help")
    assert run_help.returncode == 0
    assert "<bool>" not in run_help.stdout
    assert re.search(r"^\s+--json\s+Print JSON", run_help.stdout, re.M)
    assert "--base-url" in run_help.stdout and "--api-key" in run_help.stdout
    thinking = ponder("mcp", "thinking", "--help")
    assert thinking.returncode == 0, thinking.stderr
    assert thinking.stdout.startswith("usage: ponder mcp thinking")
    for option in ("--http", "--token", "--max-history", "--allow-host", "--strict"):
        assert option in thinking.stdout


def test_a_run_that_ends_without_an_answer_exits_1() -> None:
    with FakeOpenAIServer(["", "", "", "", "", "", "", ""]) as server:
        done = ponder(
            "run",
            "hi",
            "-m",
            "openai:fake-model",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
            PONDER_AGENT_THOUGHT_MODE="chat",
        )
    assert done.returncode == 1, done.stdout
    assert "stop: empty_answer" in done.stdout
    assert "the run ended without an answer" in one_line_error(done)
