"""``ponder chat``: the banner, Ctrl-C that cancels one turn only, --tools, --store and
--session; through the real command in a subprocess (and on a pseudo-terminal)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .test_commands import PONDER, ROOT, environment, one_line_error, ponder

LEAVING = "Ctrl-C stops an answer; an empty line, /exit or Ctrl-D leaves."


def user_messages(body: dict[str, Any]) -> list[str]:
    users = [str(m["content"]) for m in body["messages"] if m["role"] == "user"]
    return [u for u in users if not u.startswith("<BEGIN_OF")]


def answering(slow: str = "") -> Callable[[dict[str, Any]], FakeReply]:
    """A provider for the react loop that answers with the turn count; ``slow`` hangs."""

    def answer(body: dict[str, Any]) -> FakeReply:
        users = user_messages(body)
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            delay = 60.0 if users[-1] == slow else 0.0
            call = FakeToolCall(name="think_and_reason", arguments={"summary": "answer"})
            return FakeReply(tool_calls=[call], delay=delay)
        if choice == "required":
            return FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])
        return FakeReply(content=f"answer {len(users)} to {users[-1]}")

    return answer


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answering(slow="slow question")) as server:
        yield server


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def read_until(stream: IO[str], needle: str) -> list[str]:
    lines: list[str] = []
    while needle not in (line := stream.readline()):
        assert line, f"the output ended before {needle!r}: {lines}"
        lines.append(line)
    return [*lines, line]


def test_the_banner_says_how_to_leave() -> None:
    done = ponder("chat", "-m", "scripted", stdin="hello\n/exit\nnot sent\n")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == f"ponder chat with scripted. {LEAVING}"
    assert "hello" in done.stdout and "not sent" not in done.stdout


def test_ctrl_c_cancels_the_turn_and_keeps_the_repl_and_the_conversation(
    provider: FakeOpenAIServer,
) -> None:
    env = environment(OPENAI_API_KEY="k", OPENAI_BASE_URL=provider.base_url)
    process = subprocess.Popen(
        [PONDER, "chat", "-m", "openai:m", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    assert LEAVING in process.stderr.readline()
    process.stdin.write("first question\n")
    process.stdin.flush()
    read_until(process.stdout, '"run_finished"')
    process.stdin.write("slow question\n")
    process.stdin.flush()
    wait_until(lambda: any(user_messages(b)[-1:] == ["slow question"] for b in provider.requests))
    process.send_signal(signal.SIGINT)
    read_until(process.stderr, "stopped: that turn is cancelled")
    process.stdin.write("third question\n")
    process.stdin.flush()
    finished = json.loads(read_until(process.stdout, '"run_finished"')[-1])
    _, err = process.communicate("", timeout=60)
    assert process.returncode == 0, err
    assert finished["output"] == "answer 2 to third question"
    last = provider.requests[-1]
    assert user_messages(last) == ["first question", "third question"]
    assistant = [m["content"] for m in last["messages"] if m["role"] == "assistant"]
    assert "answer 1 to first question" in assistant


def test_chat_on_a_terminal_survives_ctrl_c_and_leaves_on_ctrl_d(
    provider: FakeOpenAIServer,
) -> None:
    leader, follower = pty.openpty()
    env = environment(OPENAI_API_KEY="k", OPENAI_BASE_URL=provider.base_url, TERM="dumb")
    process = subprocess.Popen(
        [PONDER, "chat", "-m", "openai:m"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    seen = b""

    def read_until_bytes(needle: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while needle not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            if select.select([leader], [], [], 0.5)[0]:
                seen += os.read(leader, 4096)
        seen = seen[seen.index(needle) + len(needle) :]

    try:
        read_until_bytes(b"Ctrl-D leaves.")
        read_until_bytes(b"you>")
        os.write(leader, b"slow question\n")
        wait_until(lambda: len(provider.requests) >= 1)
        process.send_signal(signal.SIGINT)
        read_until_bytes(b"stopped: that turn is cancelled")
        read_until_bytes(b"you>")
        os.write(leader, b"next question\n")
        read_until_bytes(b"answer 1 to next question")
        read_until_bytes(b"you>")
        os.write(leader, b"\x04")  # Ctrl-D
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


def answers(done: subprocess.CompletedProcess[str]) -> list[str]:
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return [e["output"] for e in events if e["kind"] == "run_finished"]


def test_a_session_is_stored_and_continued_by_name(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'chat.db'}"
    with FakeOpenAIServer(answering()) as server:
        url = server.base_url
        common = ("chat", "-m", "openai:m", "--store", store, "--json")

        def chat(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
            return ponder(*common, *args, stdin=stdin, OPENAI_API_KEY="k", OPENAI_BASE_URL=url)

        first = chat("--session", "trip", stdin="my name is Ann\n")
        second = chat("--session", "trip", stdin="what is my name\n")
        other = chat(stdin="who am i\n")
    for done in (first, second, other):
        assert done.returncode == 0, done.stderr
    assert f"session trip in {store}" in first.stderr
    assert answers(second) == ["answer 2 to what is my name"]
    assert answers(other) == ["answer 1 to who am i"]
    assert "session chat-" in other.stderr  # a new session, named for --session later
    listed = json.loads(ponder("runs", "list", "--store", store, "--json").stdout)
    assert [r["status"] for r in listed["runs"]] == ["completed"] * 3


def test_tools_are_offered_in_chat() -> None:
    with FakeOpenAIServer(answering()) as server:
        done = ponder(
            "chat",
            "-m",
            "openai:m",
            "--tools",
            "tests.cli.gate_tools:TOOLS",
            "--json",
            stdin="hi\n",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
        )
        requests = server.requests
    assert done.returncode == 0, done.stderr
    offered = {t["function"]["name"] for r in requests for t in r.get("tools", [])}
    assert "wait_at_gate" in offered


def test_chat_refuses_tools_it_cannot_load() -> None:
    done = ponder("chat", "-m", "scripted", "--tools", "no_such_module:TOOLS", stdin="hi\n")
    assert done.returncode == 2
    assert "cannot load 'no_such_module:TOOLS'" in one_line_error(done)
