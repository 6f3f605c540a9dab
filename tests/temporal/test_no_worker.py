"""``ponder runs show/resume/cancel --temporal`` work while no worker runs, with clear errors."""

from __future__ import annotations

import json

import pytest
from temporalio.client import Client

from ponder import Agent
from ponder.models import ScriptedModel
from ponder.temporal import TemporalAgent, TemporalRunError, build_worker
from tests.cli.test_commands import one_line_error, ponder
from tests.temporal import versions
from tests.temporal.test_control import DEPLOYED, approval_agent, deploy
from tests.temporal.test_runs import assert_replays
from tests.temporal.test_versioning import answer


async def suspended_run(client: Client, task_queue: str, agent: Agent) -> str:
    """A run waiting for approval, its worker gone."""
    async with build_worker(client, task_queue, agent):
        waiting = await TemporalAgent(client, task_queue).run("Ship it")
    assert waiting.status == "suspended"
    return waiting.run_id


async def test_a_run_is_shown_decided_and_cancelled_with_no_worker(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    DEPLOYED.clear()
    agent = approval_agent()
    run_id = await suspended_run(client, task_queue, agent)
    shown = ponder("runs", "show", run_id, "--temporal", temporal_address, "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert found["status"] == "suspended"
    assert [c["name"] for c in found["suspension"]["payload"]["calls"]] == ["deploy"]

    address = ("--temporal", temporal_address)
    wrong = ponder("runs", "resume", run_id, *address, "--decision", '{"other": "approve"}')
    assert wrong.returncode == 2 and "no decision for pending call" in one_line_error(wrong)
    decided = ponder("runs", "resume", run_id, "--temporal", temporal_address, "--approve")
    assert decided.returncode == 0, decided.stderr
    assert "decision recorded" in decided.stderr and DEPLOYED == []

    second = await suspended_run(client, task_queue, agent)
    cancelled = ponder("runs", "cancel", second, "--temporal", temporal_address)
    assert cancelled.returncode == 0, cancelled.stderr
    assert "cancelling" in cancelled.stdout

    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue)
        done = await remote.result(run_id)
        with pytest.raises(TemporalRunError, match="cancelled"):
            await remote.result(second)
        await assert_replays(client, run_id)
        await assert_replays(client, second)
    assert done.status == "completed" and DEPLOYED == ["prod"]
    again = ponder("runs", "cancel", second, "--temporal", temporal_address)
    assert again.returncode == 2 and "already cancelled" in one_line_error(again)
    missing = ponder("runs", "show", "no-such-run", "--temporal", temporal_address)
    assert missing.returncode == 2 and "no run 'no-such-run'" in one_line_error(missing)


async def test_a_run_the_workers_cannot_replay_is_shown_with_a_clear_note(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    versions.CHANGED[0] = versions.UNPATCHED[0] = False
    agent = Agent(ScriptedModel(answer), tools=[deploy], strategy=versions.Greeter)
    try:
        run_id = await suspended_run(client, task_queue, agent)
        versions.UNPATCHED[0] = True  # an unmarked change: this worker cannot replay the run
        async with build_worker(client, task_queue, agent):
            shown = ponder("runs", "show", run_id, "--temporal", temporal_address)
    finally:
        versions.UNPATCHED[0] = False
    assert shown.returncode == 0, shown.stderr
    assert f"run {run_id}: suspended" in shown.stdout
    assert "bug" not in shown.stdout + shown.stderr, shown.stdout
    assert "c1  deploy" in shown.stdout
