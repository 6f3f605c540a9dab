"""A worker SIGKILLed while a sub-agent's call runs: the child's finished calls never re-run."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from temporalio.client import Client

from ponder.temporal import TemporalAgent
from tests.temporal.test_runs import assert_replays
from tests.temporal.test_workers import (  # noqa: F401 (fixtures)
    fake_provider,
    start_worker,
    stop,
    wait_for_line,
    wait_for_worker,
    worker_env,
)

HELPED = "tests.temporal.worker_helpers:HELPED"


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_killed_worker_does_not_restart_the_sub_agent(
    client: Client, task_queue: str, temporal_address: str, worker_env: dict[str, str]
) -> None:
    log = Path(worker_env["PONDER_TEST_LOG"])
    hold = Path(str(log) + ".hold")
    hold.touch()
    remote = TemporalAgent(client, task_queue, heartbeat_timeout=2)
    first = start_worker(temporal_address, task_queue, worker_env, HELPED)
    second = None
    try:
        await wait_for_worker(remote)
        run_id = await remote.start("delegate the logging")
        await wait_for_line(log, "start second")  # the sub-agent's slow call
        first.send_signal(signal.SIGKILL)
        first.wait()
        hold.unlink()
        second = start_worker(temporal_address, task_queue, worker_env, HELPED)
        async with asyncio.timeout(90):
            result = await remote.result(run_id)
        events = await remote.events(run_id)
        await assert_replays(client, run_id)
        await assert_replays(client, f"{run_id}.{_helper_call(events)}")
    finally:
        stop(first)
        if second is not None:
            stop(second)
    lines = log.read_text().splitlines()
    assert result.status == "completed"
    assert lines.count("record first") == 1  # the child's finished call: never again
    assert lines.count("start second") == 1 and "done second" not in lines  # not idempotent
    assert result.output.startswith("Done: Done: Error: interrupted")
    nested = [e for e in events if e.kind == "sub_agent_event"]
    assert nested and nested[-1].event["kind"] == "run_finished"


def _helper_call(events: list[object]) -> str:
    return next(e.call_id for e in events if getattr(e, "kind", "") == "sub_agent_event")  # type: ignore[attr-defined]
