"""The official a2a-sdk client sends, streams, gets and cancels tasks against ponder's server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.client.client import Client
from a2a.helpers import get_artifact_text, get_data_parts, new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store.sqlite import SQLiteStore
from tests.protocols.agui_agents import broken_agent
from tests.server.live import LiveServer, gated_adder, live_server
from tests.server.openai_agents import report_agent
from tests.server.test_resume import PUBLISHED, approval_agent

TOKEN = "s3cret-token"


def plain_agent() -> Agent:
    return Agent(
        ScriptedModel(lambda request: reply("Paris is the capital of France.")),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    PUBLISHED.clear()
    return SQLiteStore(tmp_path / "runs.sqlite3")


@pytest.fixture
def server(store: SQLiteStore) -> Iterator[LiveServer]:
    with live_server(create_app(approval_agent(), store=store)) as running:
        yield running


async def client_for(url: str, *, streaming: bool = False, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    return await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))


def user(text: str, task: Task | None = None) -> SendMessageRequest:
    message = new_text_message(text, role=Role.ROLE_USER)
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    return SendMessageRequest(message=message)


async def last_task(items: AsyncIterator[StreamResponse]) -> Task:
    found = [item async for item in items]
    assert found and found[-1].HasField("task"), found
    return found[-1].task


def test_the_card_describes_the_agent_and_its_tools(server: LiveServer) -> None:
    card = httpx.get(f"{server.url}/.well-known/agent-card.json").json()
    assert card["supportedInterfaces"][0] == {
        "url": f"{server.url}/v1/a2a",
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }
    assert card["capabilities"]["streaming"] is True
    assert [s["id"] for s in card["skills"]] == ["publish"]
    assert card["skills"][0]["description"] == "Publish a text."


def test_a_factory_is_called_for_runs_and_once_for_the_card() -> None:
    made: list[Agent] = []

    def factory() -> Agent:
        made.append(approval_agent())
        return made[-1]

    with live_server(create_app(factory)) as running:
        assert made == []  # mounting the endpoints makes no agent
        first = httpx.get(f"{running.url}/.well-known/agent-card.json").json()
        again = httpx.get(f"{running.url}/.well-known/agent-card.json").json()
    assert len(made) == 1
    assert [s["id"] for s in first["skills"]] == ["publish"] and again == first


def test_send_returns_the_completed_task_with_its_answer(tmp_path: Path) -> None:
    async def go(url: str) -> Task:
        client = await client_for(url)
        task = await last_task(client.send_message(user("What is the capital of France?")))
        again = await client.get_task(GetTaskRequest(id=task.id))
        await client.close()
        assert again.status.state == TaskState.TASK_STATE_COMPLETED
        assert get_artifact_text(again.artifacts[0]) == "Paris is the capital of France."
        return task

    with live_server(create_app(plain_agent())) as running:
        task = asyncio.run(go(running.url))
        runs = httpx.get(f"{running.url}/v1/runs").json()["runs"]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["answer"]
    assert get_artifact_text(task.artifacts[0]) == "Paris is the capital of France."
    assert task.history[0].role == Role.ROLE_USER
    assert [r["id"] for r in runs] == [task.id]  # the task is a ponder run


def test_an_output_schema_types_the_answer_as_a_data_part() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "sky": {"type": "string"}},
        "required": ["city", "sky"],
    }

    async def go(url: str) -> tuple[Task, str]:
        client = await client_for(url)
        request = user("Weather in Paris?")
        request.message.metadata.update({"output_schema": schema})
        task = await last_task(client.send_message(request))
        bad = user("Weather in Paris?")
        bad.message.metadata.update({"output_schema": "a string"})
        with pytest.raises(A2AError) as refused:
            await last_task(client.send_message(bad))
        await client.close()
        return task, str(refused.value)

    with live_server(create_app(report_agent())) as running:
        task, refused = asyncio.run(go(running.url))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_data_parts(list(task.artifacts[0].parts)) == [{"city": "Paris", "sky": "unknown"}]
    assert "output_schema must be a JSON Schema object" in refused


def test_streaming_reports_submitted_working_the_artifact_and_completion() -> None:
    async def go(url: str) -> list[StreamResponse]:
        client = await client_for(url, streaming=True)
        items = [item async for item in client.send_message(user("Capital of France?"))]
        await client.close()
        return items

    with live_server(create_app(plain_agent())) as running:
        items = asyncio.run(go(running.url))
    states = [i.status_update.status.state for i in items if i.HasField("status_update")]
    assert states[:2] == [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    artifacts = [i.artifact_update.artifact for i in items if i.HasField("artifact_update")]
    assert [get_artifact_text(a) for a in artifacts] == ["Paris is the capital of France."]


def test_an_approval_is_input_required_and_the_reply_completes_the_task(server: LiveServer) -> None:
    async def go() -> tuple[Task, Task]:
        client = await client_for(server.url)
        waiting = await last_task(client.send_message(user("Publish the report.")))
        done = await last_task(client.send_message(user("approve", waiting)))
        await client.close()
        return waiting, done

    waiting, done = asyncio.run(go())
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [asked] = get_data_parts(list(waiting.status.message.parts))
    assert asked["reason"] == "approval"
    assert [c["name"] for c in asked["pending_calls"]] == ["publish"]
    assert done.id == waiting.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[-1]) == "Done: published 'report'"
    assert PUBLISHED == ["report"]


def test_a_reply_that_is_no_decision_is_refused_and_the_task_still_waits(
    server: LiveServer,
) -> None:
    async def go() -> tuple[Task, Task, Task]:
        client = await client_for(server.url)
        waiting = await last_task(client.send_message(user("Publish the report.")))
        answered = await last_task(client.send_message(user("maybe later", waiting)))
        still = await client.get_task(GetTaskRequest(id=waiting.id))
        done = await last_task(client.send_message(user("reject", waiting)))
        await client.close()
        return answered, still, done

    answered, still, done = asyncio.run(go())
    assert answered.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    said = answered.status.message.parts[0].text
    assert said.startswith("answer the approval with 'approve' or 'reject'")
    assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert PUBLISHED == []


def test_cancel_ends_a_waiting_task_for_good(server: LiveServer) -> None:
    async def go() -> tuple[Task, Task, str]:
        client = await client_for(server.url)
        waiting = await last_task(client.send_message(user("Publish the report.")))
        cancelled = await client.cancel_task(CancelTaskRequest(id=waiting.id))
        with pytest.raises(A2AError) as again:
            await client.cancel_task(CancelTaskRequest(id=waiting.id))
        got = await client.get_task(GetTaskRequest(id=waiting.id))
        await client.close()
        return cancelled, got, type(again.value).__name__

    cancelled, got, error = asyncio.run(go())
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert got.status.state == TaskState.TASK_STATE_CANCELED
    assert error == "TaskNotCancelableError"
    run = httpx.get(f"{server.url}/v1/runs/{got.id}").json()
    assert run["status"] == "cancelled"
    assert PUBLISHED == []


def test_a_waiting_task_survives_a_restart_and_another_server_completes_it(
    store: SQLiteStore,
) -> None:
    async def ask(url: str) -> Task:
        client = await client_for(url)
        task = await last_task(client.send_message(user("Publish the report.")))
        await client.close()
        return task

    async def answer(url: str, task_id: str) -> tuple[Task, Task]:
        client = await client_for(url)
        found = await client.get_task(GetTaskRequest(id=task_id))
        done = await last_task(client.send_message(user("approve", found)))
        await client.close()
        return found, done

    with live_server(create_app(approval_agent(), store=store)) as first:
        waiting = asyncio.run(ask(first.url))
    with live_server(create_app(approval_agent(), store=store)) as second:
        found, done = asyncio.run(answer(second.url, waiting.id))
    assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert found.context_id == waiting.context_id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert PUBLISHED == ["report"]


def rpc(url: str, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else None
    kwargs: dict[str, Any] = {"content": content} if content is not None else {"json": body}
    method = body.get("method", "/") if isinstance(body, dict) else "/"
    version = {} if "/" in str(method) else {"A2A-Version": "1.0"}
    return httpx.post(
        f"{url}/v1/a2a",
        headers={"content-type": "application/json", **version, **headers},
        **kwargs,
    )


def test_bad_requests_get_json_rpc_errors_never_a_500(server: LiveServer) -> None:
    parse = rpc(server.url, b"{not json")
    assert parse.status_code == 200 and parse.json()["error"]["code"] == -32700
    method = rpc(server.url, {"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}})
    assert method.json()["error"]["code"] == -32601
    wrong = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": 42}}
    assert rpc(server.url, wrong).json()["error"]["code"] == -32602
    missing = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {}}}
    assert rpc(server.url, missing).json()["error"]["code"] == -32602
    assert rpc(server.url, {"id": 5}).json()["error"]["code"] == -32600
    assert rpc(server.url, [1, 2]).json()["error"]["code"] == -32600
    unknown = {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "f" * 32}}
    assert rpc(server.url, unknown).json()["error"]["code"] == -32001  # task not found
    legacy = {"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": "f" * 32}}
    assert rpc(server.url, legacy).json()["error"]["code"] == -32001
    big = rpc(server.url, b"[" + b"1," * 600_000 + b"1]")
    assert big.status_code == 413


def test_a2a_0_3_clients_are_answered_too(server: LiveServer) -> None:
    parts = [{"kind": "text", "text": "Publish the report."}]
    message = {"role": "user", "parts": parts, "messageId": "m1", "kind": "message"}
    sent = rpc(
        server.url,
        {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}},
    )
    task = sent.json()["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "input-required"
    got = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}}
    assert rpc(server.url, got).json()["result"]["status"]["state"] == "input-required"


def test_the_token_guards_the_endpoint_and_the_card_says_so() -> None:
    async def go(url: str, token: str | None) -> Task:
        client = await client_for(url, token=token)
        try:
            return await last_task(client.send_message(user("Capital?")))
        finally:
            await client.close()

    with live_server(create_app(plain_agent(), token=TOKEN)) as running:
        card = httpx.get(f"{running.url}/.well-known/agent-card.json").json()
        refused = rpc(running.url, {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}})
        with pytest.raises(A2AError):
            asyncio.run(go(running.url, "wrong"))
        task = asyncio.run(go(running.url, TOKEN))
    assert card["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    assert refused.status_code == 401
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


def gated_agent(gate: threading.Event) -> Agent:
    """Calls ``gated_add`` (which waits for the test's gate), then answers with its sum."""

    def script(request: ModelRequest) -> ModelResponse:
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call_tools(("gated_add", {"a": 2, "b": 3}))
        return reply(f"The sum is {results[-1].content}.")

    return Agent(
        ScriptedModel(script),
        tools=[gated_adder(gate)],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


def test_a_second_client_resubscribes_to_a_running_task() -> None:
    gate = threading.Event()

    async def go(url: str) -> tuple[list[StreamResponse], list[StreamResponse]]:
        first = await client_for(url, streaming=True)
        second = await client_for(url, streaming=True)
        sent: list[StreamResponse] = []
        stream = first.send_message(user("Add 2 and 3."))
        async for item in stream:  # until the run calls the gated tool
            sent.append(item)
            if item.HasField("status_update") and item.status_update.status.message.parts:
                break
        task_id = sent[-1].status_update.task_id
        watched: list[StreamResponse] = []
        subscribed = asyncio.Event()

        async def watch() -> None:
            async for item in second.subscribe(SubscribeToTaskRequest(id=task_id)):
                watched.append(item)
                subscribed.set()

        watching = asyncio.create_task(watch())
        await subscribed.wait()  # the task is still running: the gate is closed
        gate.set()
        sent += [i async for i in stream]
        await watching
        await first.close()
        await second.close()
        return sent, watched

    with live_server(create_app(gated_agent(gate))) as running:
        sent, watched = asyncio.run(go(running.url))
    for items in (sent, watched):
        final = [i.status_update.status.state for i in items if i.HasField("status_update")]
        assert final[-1] == TaskState.TASK_STATE_COMPLETED
    artifacts = [i.artifact_update.artifact for i in watched if i.HasField("artifact_update")]
    tasks = [i.task for i in watched if i.HasField("task")]
    answers = [get_artifact_text(a) for a in artifacts] + [
        get_artifact_text(a) for t in tasks for a in t.artifacts
    ]
    assert "The sum is 5." in answers


def test_a_failed_run_is_a_failed_task_that_says_why() -> None:
    async def go(url: str) -> Task:
        client = await client_for(url)
        try:
            return await last_task(client.send_message(user("Hello?")))
        finally:
            await client.close()

    with live_server(create_app(broken_agent())) as running:
        task = asyncio.run(go(running.url))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "the provider is down" in task.status.message.parts[0].text
