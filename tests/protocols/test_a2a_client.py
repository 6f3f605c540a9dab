"""`A2AAgent`: one ponder server uses another as a sub-agent over A2A."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import Task, TaskState

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.protocols.a2a_client import A2AAgent
from ponder.server.app import create_app
from ponder.store.sqlite import SQLiteStore
from ponder.tools.tool import Tool, ToolContext, ToolResult
from tests.server.live import LiveServer, live_server
from tests.server.test_resume import PUBLISHED, approval_agent

from .test_a2a_server import client_for, last_task, plain_agent, user


def asking_agent(tool: Any) -> Agent:
    """Hands the prompt to ``tool`` once, then answers with what came back."""

    def script(request: ModelRequest) -> ModelResponse:
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call_tools((tool.name, {"task": "What is the capital of France?"}, "c1"))
        return reply(f"Remote said: {results[-1].content}")

    return Agent(
        ScriptedModel(script), tools=[tool], agent_thought_mode="chat", enable_thinking_tool=False
    )


@pytest.fixture
def remote() -> Iterator[LiveServer]:
    with live_server(create_app(plain_agent(), token="remote-token")) as running:
        yield running


def ask(url: str) -> Task:
    async def go() -> Task:
        client = await client_for(url)
        try:
            return await last_task(client.send_message(user("Ask the other agent.")))
        finally:
            await client.close()

    return asyncio.run(go())


def test_a_server_uses_another_as_a_sub_agent_over_a2a(remote: LiveServer) -> None:
    tool = A2AAgent(remote.url, name="capitals", headers={"Authorization": "Bearer remote-token"})
    app = create_app(asking_agent(tool))
    with live_server(app) as local:
        task = ask(local.url)
        record = app.state.launcher.registry.get(task.id)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(task.artifacts[0]) == "Remote said: Paris is the capital of France."
    nested = [e for e in record.events if e["kind"] == "sub_agent_event"]
    assert {e["agent"] for e in nested} == {"capitals"}
    assert {e["call_id"] for e in nested} == {"c1"}
    states = [e["event"]["state"] for e in nested if e["event"]["kind"] == "a2a_status"]
    assert states[0] == "submitted" and states[-1] == "completed"
    [finished] = [e for e in record.events if e["kind"] == "tool_call_finished"]
    assert finished["data"]["state"] == "completed"


def test_a_wrong_token_a_missing_card_and_a_timeout_are_clear_errors(
    remote: LiveServer,
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{free.getsockname()[1]}"
    cases = [
        (A2AAgent(remote.url, name="capitals"), "refused the task"),
        (A2AAgent(nowhere, name="capitals"), f"no usable A2A agent card at {nowhere}"),
        (
            A2AAgent(remote.url, name="capitals", card_path="/missing.json"),
            "no usable A2A agent card",
        ),
        (A2AAgent(remote.url, name="capitals", timeout=0.001), "did not finish in 0.001s"),
    ]
    for tool, says in cases:
        result = asking_agent(tool).run_sync("go")
        [message] = [m for m in result.messages if isinstance(m, ToolMessage)]
        assert message.content.startswith("Error: ") and says in message.content, message.content


def test_a_remote_approval_comes_back_as_input_and_the_task_id_answers_it(tmp_path: Path) -> None:
    PUBLISHED.clear()
    store = SQLiteStore(tmp_path / "remote.sqlite3")
    with live_server(create_app(approval_agent(), store=store)) as remote:
        tool = A2AAgent(remote.url, name="publisher")
        first = asking_agent(tool).run_sync("go")
        [asked] = [m for m in first.messages if isinstance(m, ToolMessage)]
        assert "needs input for task" in asked.content
        task_id = asked.data["task_id"]
        assert asked.data["state"] == "input-required"
        assert asked.data["asks"][0]["reason"] == "approval"
        answered = asyncio.run(call(tool, {"task": "approve", "task_id": task_id}))
    assert answered.success and answered.output == "Done: published 'report'"
    assert PUBLISHED == ["report"]


async def call(tool: Tool, args: dict[str, Any]) -> ToolResult:
    """Call ``tool`` directly, as a run would."""
    return await tool.function(ToolContext(run_id="r", call_id="c", tool_name=tool.name), args)
