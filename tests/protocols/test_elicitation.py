"""An MCP server's question over AG-UI (an interrupt) and A2A (``input-required``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from a2a.helpers import get_artifact_text, get_data_parts, new_data_part
from a2a.types.a2a_pb2 import Task, TaskState

from ponder.server.app import create_app
from ponder.store.sqlite import SQLiteStore
from tests.mcp.test_client_features import agent_for, calling
from tests.server.live import live_server

from .test_a2a_server import client_for, last_task, user
from .test_agui import post, run_input, text_of
from .test_agui import user as agui_user

ANSWER = {"name": "Ada", "age": 36}


def test_a_question_is_an_agui_interrupt_its_answer_resumes_the_run(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = agent_for(calling(("ask_contact", {})))
    with live_server(create_app(agent, store=store)) as running:
        first = post(running.url, run_input("t", "r1", [agui_user("Add a contact.")]))
        [interrupt] = first[-1]["outcome"]["interrupts"]
        entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": ANSWER}
        second = post(running.url, run_input("t", "r2", [], resume=[entry]))
    assert interrupt["reason"] == "input_required"
    assert interrupt["message"] == "Who should I add?"
    assert set(interrupt["responseSchema"]["properties"]) == {"name", "age"}
    assert text_of(second) == "added Ada (36)"


def test_a_question_is_input_required_and_a_data_part_answers_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")

    async def go(url: str) -> tuple[Task, Task]:
        client = await client_for(url)
        waiting = await last_task(client.send_message(user("Add a contact.")))
        reply = user("", waiting)
        del reply.message.parts[:]
        reply.message.parts.append(new_data_part(ANSWER))
        done = await last_task(client.send_message(reply))
        await client.close()
        return waiting, done

    agent = agent_for(calling(("ask_contact", {})))
    with live_server(create_app(agent, store=store)) as running:
        waiting, done = asyncio.run(go(running.url))
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [asked] = get_data_parts(list(waiting.status.message.parts))
    assert asked["reason"] == "elicitation"
    assert asked["questions"][0]["message"] == "Who should I add?"
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[-1]) == "added Ada (36)"
