"""The Temporal fault lane: two workers, one killed (SIGKILL) in the middle of a batch.

    python -m tests.temporal.fault_lane [--runs-per-kind N]

A batch of runs — slow calls, approval-gated calls and sub-agents (child workflows) —
goes to two ``ponder worker`` processes; once slow calls are under way, one worker is
killed. Every run must complete; no effect may happen twice, and every call a run
reports as done must have its effect. Exits non-zero (with the reasons) otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ponder.agent import RunResult
from ponder.messages import ToolMessage
from ponder.temporal import TemporalAgent, connect
from ponder.testing import FakeOpenAIServer, TemporalDevServer
from tests.temporal.fault_tools import script

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("slow", "approve", "delegate")
EFFECTS = frozenset({"effect", "slow_effect", "deploy"})


def start_worker(address: str, queue: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A ``ponder worker`` process serving the fault tools."""
    command = [
        sys.executable,
        "-m",
        "ponder.cli.main",
        "worker",
        "--temporal",
        address,
        "--task-queue",
        queue,
        "--model",
        "openai:fake-model",
        "--tools",
        "tests.temporal.fault_tools:TOOLS",
        "--config",
        env["PONDER_CONFIG_FILE"],
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)


async def until(check: Any, seconds: float) -> None:
    """Wait until ``check()`` is true (polled), at most ``seconds``."""
    async with asyncio.timeout(seconds):
        while not await check():
            await asyncio.sleep(0.1)


def running_slow_call(
    workers: list[subprocess.Popen[bytes]], lines: list[str]
) -> subprocess.Popen[bytes]:
    """The worker that runs the first slow call (its pid is in the log), else the first."""
    pid = int(next(line for line in lines if line.startswith("start ")).split()[-1])
    return next((w for w in workers if w.pid == pid), workers[0])


async def finish(remote: TemporalAgent, run_id: str) -> RunResult:
    """The run's final result, approving what it waits for on the way."""
    result = await remote.result(run_id)
    while result.status == "suspended":
        await remote.decide(run_id, "approve")
        result = await remote.result(run_id)
    return result


async def effects_of(remote: TemporalAgent, result: RunResult) -> tuple[list[str], int]:
    """The tags of the effects the run (and its sub-agents) report as done, and how many
    of its calls were interrupted by the lost worker."""
    done: list[str] = []
    interrupted = 0
    for message in result.messages:
        if not isinstance(message, ToolMessage):
            continue
        if message.is_error:
            interrupted += "interrupted" in message.content
        elif message.name in EFFECTS:
            done.append(message.content.split()[-1])
        elif message.name == "helper" and isinstance(message.data, dict):
            child = await remote.result(str(message.data["run_id"]))
            found, lost = await effects_of(remote, child)
            done, interrupted = done + found, interrupted + lost
    return done, interrupted


def problems_of(lines: list[str], results: list[RunResult], done: list[str]) -> list[str]:
    """What the lane found wrong: runs not completed, effects doubled or missing."""
    made = Counter(line.split()[1] for line in lines if line.startswith("effect "))
    found = [f"run {r.run_id} ended {r.status}" for r in results if r.status != "completed"]
    found += [f"effect {tag} happened {n} times" for tag, n in made.items() if n > 1]
    found += [f"effect {tag} reported done but not made" for tag in done if not made[tag]]
    return found


async def lane(address: str, env: dict[str, str], per_kind: int) -> tuple[list[str], int]:
    """Run the batch, kill a worker in its middle: the problems found (none: passed), and
    the calls the kill interrupted."""
    queue = f"faults-{os.getpid()}"
    log = Path(env["PONDER_TEST_LOG"])
    workers = [start_worker(address, queue, env) for _ in range(2)]
    try:
        remote = TemporalAgent(await connect(address, timeout=30), queue, heartbeat_timeout=2)
        await until(remote.has_worker, 60)
        prompts = [f"{kind} r{n}{kind[0]}" for n in range(per_kind) for kind in KINDS]
        run_ids = [await remote.start(prompt) for prompt in prompts]

        async def slow_started() -> bool:
            return log.exists() and "start " in log.read_text()

        await until(slow_started, 60)
        victim = running_slow_call(workers, log.read_text().splitlines())
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        async with asyncio.timeout(150):
            results = list(await asyncio.gather(*(finish(remote, r) for r in run_ids)))
        done: list[str] = []
        interrupted = 0
        for result in results:
            found, lost = await effects_of(remote, result)
            done, interrupted = done + found, interrupted + lost
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=20)
    return problems_of(log.read_text().splitlines(), results, done), interrupted


def main() -> None:
    """Start a dev server and a fake provider, run the lane, report, exit 1 on problems."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-kind", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, FakeOpenAIServer(script) as provider:
        config = Path(folder) / "ponder.toml"
        config.write_text('agent_thought_mode = "chat"\nenable_thinking_tool = false\n')
        env = {
            **os.environ,
            "OPENAI_BASE_URL": provider.base_url,
            "OPENAI_API_KEY": "test-key",
            "PONDER_TEST_LOG": str(Path(folder) / "effects.log"),
            "PONDER_CONFIG_FILE": str(config),
        }
        with TemporalDevServer() as server:
            problems, interrupted = asyncio.run(lane(server.address, env, args.runs_per_kind))
    runs = args.runs_per_kind * len(KINDS)
    for problem in problems:
        print(f"fault lane: {problem}", file=sys.stderr)
    print(
        f"fault lane: {runs} runs, a worker killed, {interrupted} calls interrupted: "
        f"{len(problems)} problems"
    )
    sys.stdout.flush()
    os._exit(1 if problems else 0)  # Temporal's client threads can abort a finalizing interpreter


if __name__ == "__main__":
    main()
