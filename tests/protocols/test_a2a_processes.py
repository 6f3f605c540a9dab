"""Two ``ponder serve`` processes: one uses the other as a sub-agent over A2A."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import GetTaskRequest, Task, TaskState

from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from tests.server.live import sse_events

from .test_a2a_server import client_for, last_task, user

ROOT = Path(__file__).resolve().parents[2]
ECHO_CONFIG = ROOT / "examples" / "no_tools.toml"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def ponder_serve(
    *options: str, env: dict[str, str] | None = None, kill: bool = False
) -> Iterator[str]:
    """``ponder serve`` as a subprocess until the block ends (``kill``: SIGKILL); its URL.

    Without a ``--token`` in ``options`` the server runs with ``--no-token`` (loopback).
    """
    port = free_port()
    command = [sys.executable, "-m", "ponder.cli.main", "serve", "--port", str(port), *options]
    if "--token" not in options:
        command.append("--no-token")
    server = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/.well-known/agent-card.json", timeout=1)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.1)
        yield url
    finally:
        if kill:
            server.kill()
        else:
            server.terminate()
        server.wait(timeout=30)


async def ask(url: str) -> Task:
    client = await client_for(url)
    try:
        return await last_task(client.send_message(user("Ask the echoer.")))
    finally:
        await client.close()


def test_one_ponder_serve_uses_another_as_a_sub_agent(tmp_path: Path) -> None:
    config = tmp_path / "ponder.toml"
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="echoer", arguments={"task": "Echo me."})]),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "done"})]),
        FakeReply(content="The echoer has answered."),
    ]
    with (
        FakeOpenAIServer(script) as provider,
        ponder_serve("-m", "scripted", "-c", str(ECHO_CONFIG), "--token", "r-tok") as remote,
    ):
        config.write_text(
            f'base_url = "{provider.base_url}"\napi_key = "k"\n'
            'agent_thought_mode = "chat"\nenable_thinking_tool = false\n'
        )
        env = {"PONDER_TEST_REMOTE": remote, "PONDER_TEST_REMOTE_TOKEN": "r-tok"}
        options = ("-m", "openai:fake-model", "-c", str(config))
        tools = ("--tools", "tests.protocols.remote_tools:TOOLS")
        with ponder_serve(*options, *tools, env=env) as local:
            task = asyncio.run(ask(local))
            with httpx.stream("GET", f"{local}/v1/runs/{task.id}/events", timeout=30) as got:
                events = [json.loads(e["data"]) for e in sse_events(got.iter_lines())]
        remote_runs = httpx.get(f"{remote}/v1/runs", headers={"Authorization": "Bearer r-tok"})
        asked = provider.requests[1]["messages"]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(task.artifacts[0]) == "The echoer has answered."
    [result] = [m for m in asked if m["role"] == "tool"]
    assert result["content"] == "Echo me."  # the remote agent's answer reached the model
    nested = [e for e in events if e["kind"] == "sub_agent_event"]
    assert nested and {e["agent"] for e in nested} == {"echoer"}
    assert [r["prompt"] for r in remote_runs.json()["runs"]] == ["Echo me."]


def test_a_task_survives_its_server_being_killed_mid_run(tmp_path: Path) -> None:
    config = tmp_path / "ponder.toml"
    store = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="wait_for_file", arguments={"name": "go"})]),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "done"})]),
        FakeReply(content="The file came."),
    ]
    env = {"PONDER_TEST_GATE_DIR": str(tmp_path)}
    tools = ("--tools", "tests.protocols.remote_tools:SLOW_TOOLS", "--store", store)

    async def start(url: str) -> Task:
        client = await client_for(url, streaming=True)
        stream = client.send_message(user("Wait for the file."))
        async for item in stream:  # until the run calls the tool, then the client goes
            if item.HasField("status_update") and item.status_update.status.message.parts:
                break
        found = await client.get_task(GetTaskRequest(id=item.status_update.task_id))
        await client.close()
        return found

    async def finish(url: str, task_id: str) -> tuple[Task, Task]:
        client = await client_for(url)
        found = await client.get_task(GetTaskRequest(id=task_id))
        done = await last_task(client.send_message(user("Continue.", found)))
        await client.close()
        return found, done

    with FakeOpenAIServer(script) as provider:
        config.write_text(
            f'base_url = "{provider.base_url}"\napi_key = "k"\n'
            'agent_thought_mode = "chat"\nenable_thinking_tool = false\n'
        )
        options = ("-m", "openai:fake-model", "-c", str(config), *tools)
        with ponder_serve(*options, env=env, kill=True) as first:
            running = asyncio.run(start(first))
        (tmp_path / "go").write_text("")
        with ponder_serve(*options, env=env) as second:
            found, done = asyncio.run(finish(second, running.id))
    assert running.status.state == TaskState.TASK_STATE_WORKING
    assert found.status.state == TaskState.TASK_STATE_WORKING  # rebuilt from the stored run
    assert done.id == running.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[-1]) == "The file came."
