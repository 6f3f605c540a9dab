"""Record the histories kept in ``tests/temporal/histories`` (run before each release).

``python -m tests.temporal.record_histories`` runs each case below on a fresh Temporal dev
server with this checkout's ponder and writes its history next to the ones of earlier
releases (``<case>-<version>.json``). ``test_upgrades.py`` replays every kept history with
the current code: a change to ponder's workflow that is not behind a patch marker fails
there, before it reaches runs in flight.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.client import Client

import ponder
from ponder import Agent
from ponder.models import ScriptedModel, call_tools
from ponder.temporal import (
    HistoryBudget,
    TemporalAgent,
    TemporalRunError,
    build_worker,
    connect,
)
from ponder.testing import TemporalDevServer
from tests.agent.scripts import think
from tests.temporal.test_control import approval_agent, linger
from tests.temporal.test_runs import add, by_history, explode, react_script

HISTORIES = Path(__file__).parent / "histories"


async def _until_tool(remote: TemporalAgent, run_id: str) -> None:
    async for event in remote.follow(run_id):
        if event.kind == "tool_call_started":
            return


async def tools_run(client: Client, queue: str) -> str:
    """A ReAct run with two concurrent tool calls, one failing, its answer streamed."""
    async with build_worker(client, queue, Agent(by_history(react_script()), tools=[add, explode])):
        return (await TemporalAgent(client, queue).run("Add 2 and 3")).run_id


async def approved_run(client: Client, queue: str) -> str:
    """A run that waits for an approval, gets it, and completes."""
    async with build_worker(client, queue, approval_agent()):
        remote = TemporalAgent(client, queue)
        waiting = await remote.run("Ship it")
        await remote.decide(waiting.run_id, "approve")
        return (await remote.result(waiting.run_id)).run_id


async def cancelled_in_tool(client: Client, queue: str) -> str:
    """A run cancelled while a tool call runs."""
    agent = Agent(
        ScriptedModel([think("wait"), call_tools(("linger", {"seconds": 30}))]), tools=[linger]
    )
    async with build_worker(client, queue, agent):
        remote = TemporalAgent(client, queue, heartbeat_timeout=2)
        run_id = await remote.start("Wait")
        await _until_tool(remote, run_id)
        await remote.cancel(run_id)
        try:
            await remote.result(run_id)
        except TemporalRunError:
            pass
        return run_id


async def cancelled_waiting(client: Client, queue: str) -> str:
    """A run cancelled while it waits for an approval."""
    async with build_worker(client, queue, approval_agent()):
        remote = TemporalAgent(client, queue)
        waiting = await remote.run("Ship it")
        await remote.cancel(waiting.run_id)
        try:
            await remote.result(waiting.run_id)
        except TemporalRunError:
            pass
        return waiting.run_id


async def continued_run(client: Client, queue: str) -> str:
    """A run handed on to a new workflow run every round, and while it waits for an approval.

    The history kept is the last run's, which begins from what the one before handed on.
    """
    async with build_worker(client, queue, approval_agent()):
        remote = TemporalAgent(client, queue, history_budget=HistoryBudget(rounds=1))
        waiting = await remote.run("Ship it")
        await remote.decide(waiting.run_id, "approve")
        return (await remote.result(waiting.run_id)).run_id


CASES: dict[str, Callable[[Client, str], Awaitable[str]]] = {
    "tools": tools_run,
    "approved": approved_run,
    "cancelled-in-tool": cancelled_in_tool,
    "cancelled-waiting": cancelled_waiting,
    "continued": continued_run,
}


async def record(address: str) -> list[Path]:
    client = await connect(address, timeout=30)
    written = []
    for name, case in CASES.items():
        run_id = await case(client, f"record-{name}")
        history = await client.get_workflow_handle(run_id).fetch_history()
        data: dict[str, Any] = json.loads(history.to_json())
        path = HISTORIES / f"{name}-{ponder.__version__}.json"
        path.write_text(json.dumps({"workflow_id": run_id, "history": data}) + "\n")
        written.append(path)
    return written


def main() -> None:
    HISTORIES.mkdir(exist_ok=True)
    with TemporalDevServer() as server:
        for path in asyncio.run(record(server.address)):
            print(path)


if __name__ == "__main__":
    main()
