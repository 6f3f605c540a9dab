"""``ponder serve --temporal``: runs started over HTTP run on workers and show as local ones."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ponder.exceptions import UserError
from ponder.server.app import create_app
from ponder.server.local_launcher import RunConflict
from ponder.temporal import TemporalAgent, build_worker
from ponder.temporal.launcher import TemporalLauncher
from tests.cli.test_commands import free_port
from tests.temporal.test_control import DEPLOYED, approval_agent

ROOT = Path(__file__).resolve().parents[2]


async def events_until(
    http: httpx.AsyncClient, run_id: str, kind: str, after: int = 0
) -> list[Any]:
    """The run's SSE events after ``after`` up to the first of ``kind``."""
    found: list[Any] = []
    async with http.stream("GET", f"/v1/runs/{run_id}/events", params={"after": after}) as reply:
        assert reply.status_code == 200
        async for line in reply.aiter_lines():
            if line.startswith("data:"):
                found.append(json.loads(line[5:]))
                if found[-1]["kind"] == kind:
                    break
    return found


@pytest.mark.timeout(180)
async def test_serve_starts_shows_decides_and_cancels_runs_on_temporal(
    client: Client, task_queue: str, served: str
) -> None:
    DEPLOYED.clear()
    async with (
        build_worker(client, task_queue, approval_agent()),
        httpx.AsyncClient(base_url=served, timeout=60) as http,
    ):
        started = await http.post("/v1/runs", json={"prompt": "Ship it"})
        assert started.status_code == 201
        run_id = started.json()["id"]
        before = await events_until(http, run_id, "run_suspended")
        assert before[0]["kind"] == "run_started" and before[0]["prompt"] == "Ship it"
        shown = (await http.get(f"/v1/runs/{run_id}")).json()
        assert shown["status"] == "suspended" and DEPLOYED == []
        assert shown["suspension"]["payload"]["calls"][0]["name"] == "deploy"

        bad = await http.post(f"/v1/runs/{run_id}/resume", json={"decision": "maybe"})
        assert bad.status_code == 400 and "decision" in bad.json()["error"]["message"]
        approved = await http.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert approved.status_code == 200
        after = await events_until(http, run_id, "run_finished", after=before[-1]["seq"])
        assert after[0]["kind"] == "run_resumed" and after[-1]["output"] == "Finished."
        await asyncio.sleep(0)  # the follower records the end once the workflow closes
        async with asyncio.timeout(30):
            while (done := (await http.get(f"/v1/runs/{run_id}")).json())["status"] == "running":
                await asyncio.sleep(0.1)
        assert done["status"] == "completed" and done["output"] == "Finished."
        assert DEPLOYED == ["prod"]
        again = await http.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert again.status_code == 409

        other = (await http.post("/v1/runs", json={"prompt": "Ship it"})).json()["id"]
        await events_until(http, other, "run_suspended")
        cancelled = (await http.post(f"/v1/runs/{other}/cancel", json={})).json()
        assert cancelled["status"] == "cancelled" and DEPLOYED == ["prod"]

        elsewhere = await TemporalAgent(client, task_queue).start("Ship it")  # not via HTTP
        adopted = await events_until(http, elsewhere, "run_suspended")
        assert adopted[0]["kind"] == "run_started"
        listed = [r["id"] for r in (await http.get("/v1/runs")).json()["runs"]]
        assert {run_id, other, elsewhere} <= set(listed)
        await TemporalAgent(client, task_queue).cancel(elsewhere)
        missing = await http.get("/v1/runs/no-such-run")
        assert missing.status_code == 404
        viewer = await http.get("/")
        assert viewer.status_code == 200 and "<html" in viewer.text.lower()


def serve_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ponder.cli.main", "serve", "--port", str(free_port())]
    return subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


async def test_serve_temporal_refuses_agent_options_and_an_unreachable_server() -> None:
    unreachable, with_model = await asyncio.gather(
        asyncio.to_thread(serve_cli, "--temporal", "127.0.0.1:1", "--task-queue", "q"),
        asyncio.to_thread(
            serve_cli, "--temporal", "127.0.0.1:1", "--task-queue", "q", "--model", "scripted:x"
        ),
    )
    assert unreachable.returncode == 2 and "cannot reach Temporal" in unreachable.stderr
    assert with_model.returncode == 2 and "ponder worker" in with_model.stderr


def test_a_launcher_needs_a_task_queue_and_excludes_an_agent() -> None:
    with pytest.raises(UserError, match="task queue"):
        TemporalLauncher("127.0.0.1:7233", "")
    with pytest.raises(UserError, match="an agent or a launcher"):
        create_app()
    launcher = TemporalLauncher("127.0.0.1:7233", "q")
    with pytest.raises(UserError, match="or a launcher"):
        create_app(approval_agent(), launcher=launcher)
    assert create_app(launcher=launcher).state.launcher is launcher


@pytest.mark.timeout(120)
async def test_the_launcher_in_process_lists_adopts_decides_and_cancels(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    DEPLOYED.clear()
    launcher = TemporalLauncher(temporal_address, task_queue, poll=0.05)
    async with build_worker(client, task_queue, approval_agent()):
        record = launcher.start("Ship it")
        await launcher.wait(record.run_id)
        assert record.status == "suspended" and not launcher.cancel(record.run_id)
        with pytest.raises(UserError, match="decision"):
            await launcher.resume(record, {"nope": "approve"})
        resumed = await launcher.resume(record, "approve")
        assert resumed.summary()["status"] == "running"
        await launcher.wait(record.run_id)
        assert resumed.summary()["status"] == "completed" and resumed.output == "Finished."
        with pytest.raises(RunConflict):
            await launcher.resume(record, "approve")

        elsewhere = await TemporalAgent(client, task_queue).start("Ship it elsewhere")
        async with asyncio.timeout(30):  # visibility catches up within moments
            while not (listed := await launcher.stored_records(10)):
                await asyncio.sleep(0.2)
        assert [(r.run_id, r.prompt) for r in listed] == [(elsewhere, "Ship it elsewhere")]
        assert await launcher.lookup("no-such-run") is None
        adopted = await launcher.lookup(elsewhere)
        assert adopted is not None and await launcher.stored_records(10) == []
        await launcher.wait(elsewhere)
        assert adopted.status == "suspended" and adopted.prompt == "Ship it elsewhere"
        await launcher.cancel_suspended(adopted)
        assert (
            adopted.summary()["status"] == "cancelled"
            and adopted.events[-1]["kind"] == "run_failed"
        )
        await launcher.shutdown()
    assert DEPLOYED == ["prod"]


async def test_serve_temporal_refuses_typed_answers_and_client_tools(served: str) -> None:
    question = {"role": "user", "content": "Ship it"}
    typed = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}}
    tool = {"type": "function", "function": {"name": "deploy"}}
    async with httpx.AsyncClient(base_url=served, timeout=60) as http:
        for extra, param in (
            ({"response_format": typed}, "response_format"),
            ({"tools": [tool]}, "tools"),
        ):
            answer = await http.post(
                "/v1/chat/completions", json={"model": "m", "messages": [question], **extra}
            )
            assert answer.status_code == 400
            assert answer.json()["error"]["param"] == param
        assert (await http.get("/v1/runs")).json()["runs"] == []
