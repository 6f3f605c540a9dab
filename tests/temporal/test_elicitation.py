"""An MCP server's question on Temporal suspends the run; the answer resumes it later."""

from __future__ import annotations

import asyncio
import json

from temporalio.client import Client

from ponder.temporal import TemporalAgent, build_worker
from tests.cli.test_commands import one_line_error, ponder
from tests.mcp.test_client_features import agent_for, calling
from tests.temporal.test_runs import assert_replays


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
