"""Workers in their own processes: worker loss, and the CLI (`ponder worker`, run, runs)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from ponder.events import Event, SubAgentEvent
from ponder.messages import ToolMessage
from ponder.temporal import TemporalAgent
from tests.temporal.test_runs import assert_replays

ROOT = Path(__file__).resolve().parents[2]
PONDER = [sys.executable, "-m", "ponder.cli.main"]


def start_worker(
    address: str, queue: str, env: dict[str, str], tools: str = "tests.temporal.worker_tools:TOOLS"
) -> subprocess.Popen[bytes]:
    command = [
        *PONDER,
        "worker",
        "--temporal",
        address,
        "--task-queue",
        queue,
        "--model",
        "openai:fake-model",
        "--tools",
        tools,
        "--config",
        env["PONDER_CONFIG_FILE"],
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE)


async def wait_for_worker(remote: TemporalAgent, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not await remote.has_worker():
            await asyncio.sleep(0.2)


async def wait_for_line(log: Path, line: str, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not (log.exists() and line in log.read_text().splitlines()):
            await asyncio.sleep(0.05)


def stop(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("idempotent", [False, True], ids=["at-most-once", "idempotent"])
async def test_a_killed_worker_is_replaced_and_no_finished_call_runs_twice(
    client: Client,
    task_queue: str,
    temporal_address: str,
    worker_env: dict[str, str],
    idempotent: bool,
) -> None:
    log = Path(worker_env["PONDER_TEST_LOG"])
    hold = Path(str(log) + ".hold")
    hold.touch()
    remote = TemporalAgent(client, task_queue, heartbeat_timeout=2)
    first = start_worker(temporal_address, task_queue, worker_env)
    second = None
    try:
        await wait_for_worker(remote)
        run_id = await remote.start("log it safe" if idempotent else "log it")
        await wait_for_line(log, "start second")
        first.send_signal(signal.SIGKILL)
        first.wait()
        hold.unlink()
        second = start_worker(temporal_address, task_queue, worker_env)
        async with asyncio.timeout(90):
            result = await remote.result(run_id)
        await assert_replays(client, run_id)
    finally:
        stop(first)
        if second is not None:
            stop(second)
    lines = log.read_text().splitlines()
    assert lines.count("record first") == 1  # finished before the kill: never again
    slow = next(m for m in result.messages if isinstance(m, ToolMessage) and "slow" in m.name)
    assert result.status == "completed"
    if idempotent:
        assert lines.count("start second") == 2 and lines.count("done second") == 1
        assert not slow.is_error and result.output == "Done: recorded second"
    else:
        assert lines.count("start second") == 1 and "done second" not in lines
        assert slow.is_error and "interrupted" in slow.content
        assert result.output.startswith("Done: Error: interrupted")


def ponder_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PONDER, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_approval_across_processes_through_the_cli(
    client: Client, task_queue: str, temporal_address: str, worker_env: dict[str, str]
) -> None:
    log = Path(worker_env["PONDER_TEST_LOG"])
    worker = start_worker(temporal_address, task_queue, worker_env)
    common = ["--temporal", temporal_address]
    try:
        await wait_for_worker(TemporalAgent(client, task_queue))
        ran = await asyncio.to_thread(
            ponder_cli,
            "run",
            "deploy it",
            *common,
            "--task-queue",
            task_queue,
            "--json",
            env=worker_env,
        )
        assert ran.returncode == 3, ran.stderr
        events = [json.loads(line) for line in ran.stdout.splitlines()]
        assert events[-1]["kind"] == "run_suspended"
        run_id = events[-1]["run_id"]
        assert f"ponder runs resume {run_id} --temporal {temporal_address} --approve" in ran.stderr

        shown = await asyncio.to_thread(
            ponder_cli, "runs", "show", run_id, *common, "--json", env=worker_env
        )
        assert json.loads(shown.stdout)["status"] == "suspended" and not log.exists()

        resumed = await asyncio.to_thread(
            ponder_cli, "runs", "resume", run_id, *common, "--approve", "--json", env=worker_env
        )
        assert resumed.returncode == 0, resumed.stderr
        kinds = [json.loads(line)["kind"] for line in resumed.stdout.splitlines()]
        assert kinds[0] == "run_resumed" and kinds[-1] == "run_finished"

        done = await asyncio.to_thread(
            ponder_cli, "runs", "show", run_id, *common, "--json", env=worker_env
        )
        final = json.loads(done.stdout)
        assert (final["status"], final["output"]) == ("completed", "Done: deployed to prod")
        assert log.read_text().splitlines() == ["deploy prod"]

        again = await asyncio.to_thread(
            ponder_cli, "runs", "resume", run_id, *common, "--approve", env=worker_env
        )
        assert again.returncode == 2 and "not waiting for a decision" in again.stderr

        detached = await asyncio.to_thread(
            ponder_cli,
            "run",
            "deploy again",
            *common,
            "--task-queue",
            task_queue,
            "--detach",
            env=worker_env,
        )
        assert detached.returncode == 0 and len(detached.stdout.split()) == 1
        rejected = await asyncio.to_thread(
            ponder_cli,
            "runs",
            "resume",
            detached.stdout.strip(),
            *common,
            "--reject",
            "--reason",
            "frozen",
            env=worker_env,
        )
        assert rejected.returncode == 0, rejected.stderr
        assert log.read_text().splitlines() == ["deploy prod"]
    finally:
        stop(worker)


async def test_cli_errors_are_one_clear_line(temporal_address: str, task_queue: str) -> None:
    env = dict(os.environ)
    unreachable = await asyncio.to_thread(
        ponder_cli, "run", "x", "--temporal", "127.0.0.1:9", "--task-queue", "q", env=env
    )
    assert unreachable.returncode == 2 and "cannot reach Temporal" in unreachable.stderr
    no_queue = await asyncio.to_thread(
        ponder_cli, "run", "x", "--temporal", temporal_address, env=env
    )
    assert no_queue.returncode == 2 and "--task-queue" in no_queue.stderr
    nobody = await asyncio.to_thread(
        ponder_cli, "run", "x", "--temporal", temporal_address, "--task-queue", task_queue, env=env
    )
    assert nobody.returncode == 2 and "no worker polls task queue" in nobody.stderr
    missing = await asyncio.to_thread(
        ponder_cli, "runs", "show", "nope", "--temporal", temporal_address, env=env
    )
    assert missing.returncode == 2 and "no run 'nope'" in missing.stderr


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


def _helper_call(events: list[Event]) -> str:
    return next(e.call_id for e in events if isinstance(e, SubAgentEvent))
