"""An MCP server's question on Temporal suspends the run; the answer resumes it later."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ponder.temporal import TemporalAgent, build_worker
from tests.cli.test_commands import one_line_error, ponder
from tests.mcp.test_client_features import agent_for, calling
from tests.temporal.test_runs import assert_replays
from tests.temporal.test_serve import events_until


async def test_a_question_suspends_the_run_and_answers_come_by_update_and_cli(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    async with agent_for(calling(("ask_contact", {}), ("visit", {}))) as agent:
        async with build_worker(client, task_queue, agent):
            remote = TemporalAgent(client, task_queue)
            waiting = await remote.run("add a contact")
            assert waiting.status == "suspended" and waiting.suspension is not None
            assert waiting.suspension["reason"] == "elicitation"
            [question] = waiting.suspension["payload"]["elicitations"]
            assert question["message"] == "Who should I add?" and question["tool"] == "ask_contact"

            address = ("--temporal", temporal_address)
            bad = json.dumps({"action": "accept", "content": {"name": "Ada", "age": 500}})
            resume = ("runs", "resume", waiting.run_id, *address, "--answer")
            refused = await asyncio.to_thread(ponder, *resume, bad)
            assert refused.returncode == 2
            assert "does not match its schema: age" in one_line_error(refused)
            good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
            await remote.decide(waiting.run_id, {question["id"]: good})
            visiting = await remote.result(waiting.run_id)
            [visit] = visiting.suspension["payload"]["elicitations"]  # type: ignore[index]
            assert visit["mode"] == "url"
            accept = json.dumps({"action": "accept"})
            answered = await asyncio.to_thread(ponder, *resume, accept)
            assert answered.returncode == 0, answered.stderr
            done = await remote.result(waiting.run_id)
            await assert_replays(client, waiting.run_id)
    assert done.status == "completed", done
    assert done.text == "added Ada (36) | visit: accept"


@pytest.mark.timeout(180)
async def test_serve_temporal_lists_a_held_question_and_answers_it_over_http(
    client: Client, task_queue: str, served: str
) -> None:
    async with agent_for(calling(("ask_contact", {}), ("visit", {}))) as agent:
        async with (
            build_worker(client, task_queue, agent),
            httpx.AsyncClient(base_url=served, timeout=60) as http,
        ):
            run_id = (await http.post("/v1/runs", json={"prompt": "add a contact"})).json()["id"]
            await events_until(http, run_id, "run_suspended")
            [question] = (await http.get(f"/v1/runs/{run_id}/elicitations")).json()["data"]
            assert question["message"] == "Who should I add?" and question["tool"] == "ask_contact"

            answer = f"/v1/runs/{run_id}/elicitations/{question['id']}"
            bad = await http.post(answer, json={"action": "accept", "content": {"age": 500}})
            assert bad.status_code == 400 and "age" in bad.json()["error"]["message"]
            good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
            answered = await http.post(answer, json=good)
            assert answered.status_code == 200 and answered.json()["resumed"] is True
            [visit] = await held_question(http, run_id, question["id"])
            assert visit["mode"] == "url"
            resumed = await http.post(
                f"/v1/runs/{run_id}/resume", json={"decision": {visit["id"]: {"action": "accept"}}}
            )
            assert resumed.status_code == 200
            done = await TemporalAgent(client, task_queue).result(run_id)
            again = await http.post(answer, json=good)
    assert done.status == "completed", done
    assert done.text == "added Ada (36) | visit: accept"
    assert again.status_code == 404


async def held_question(http: httpx.AsyncClient, run_id: str, answered: str) -> list[Any]:
    """The questions the run waits on once the one answered is no longer among them."""
    async with asyncio.timeout(60):
        while True:
            found = (await http.get(f"/v1/runs/{run_id}/elicitations")).json()["data"]
            if found and all(q["id"] != answered for q in found):
                return list(found)
            await asyncio.sleep(0.1)
