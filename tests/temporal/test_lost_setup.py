"""A worker lost while a run is set up (its MCP servers starting) is noticed in a heartbeat.

The setup activity (``ponder.prepare``) heartbeats while the agent's MCP servers start,
so the run goes on on another worker after the heartbeat timeout, not after the
setup step's 120-second start-to-close timeout.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.client import Client

from ponder.temporal import TemporalAgent
from tests.temporal.test_runs import assert_replays
from tests.temporal.test_workers import start_worker, stop, wait_for_line, wait_for_worker

SERVER = Path(__file__).with_name("slow_mcp_server.py")


def with_slow_mcp_server(env: dict[str, str]) -> Path:
    """Give the workers of ``env`` the slow MCP server; returns the file that holds it."""
    log = Path(env["PONDER_TEST_LOG"])
    hold = Path(str(log) + ".mcp-hold")
    command = json.dumps([sys.executable, str(SERVER), str(log), str(hold)])
    config = Path(env["PONDER_CONFIG_FILE"])
    config.write_text(
        config.read_text()
        + "agent_mcp_client_enable = true\n"
        + f"agent_mcp_server_scripts = [{json.dumps('stdio://' + command)}]\n"
    )
    return hold


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_worker_lost_during_setup_is_replaced_within_a_heartbeat(
    client: Client, task_queue: str, temporal_address: str, worker_env: dict[str, str]
) -> None:
    hold = with_slow_mcp_server(worker_env)
    hold.touch()
    log = Path(worker_env["PONDER_TEST_LOG"])
    remote = TemporalAgent(client, task_queue, heartbeat_timeout=2)
    first = start_worker(temporal_address, task_queue, worker_env)
    second = None
    try:
        await wait_for_worker(remote)
        run_id = await remote.start("log it")
        await wait_for_line(log, "mcp starting")
        first.send_signal(signal.SIGKILL)
        first.wait()
        hold.unlink()
        second = start_worker(temporal_address, task_queue, worker_env)
        async with asyncio.timeout(90):
            result = await remote.result(run_id)
        await assert_replays(client, run_id)
        history = await client.get_workflow_handle(run_id).fetch_history()
    finally:
        stop(first)
        if second is not None:
            stop(second)
    assert result.status == "completed" and result.output == "Done: recorded second"
    started = next(
        e.activity_task_started_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    )  # the setup step's: the run's first activity
    assert started.attempt == 2
    lost = started.last_failure.timeout_failure_info.timeout_type
    assert lost == TimeoutType.TIMEOUT_TYPE_HEARTBEAT  # not the 120 s start-to-close timeout
