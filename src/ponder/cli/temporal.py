"""The commands on Temporal: ``ponder worker``; ``run``, ``runs`` and ``serve --temporal``.

The agent lives on the workers; ``run``, ``runs show`` and ``runs resume`` with
``--temporal HOST:PORT`` only talk to the server. A run that suspends for approval prints
its pending calls and the command that decides it, and exits with code 3, as locally.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Coroutine
from typing import IO, TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from ponder.agent import Agent
from ponder.cli.errors import EXIT_SUSPENDED
from ponder.cli.options import ConfigOption, ModelOption, ToolsOption, WorkflowOption
from ponder.cli.render import LiveDisplay
from ponder.cli.reporting import reported
from ponder.cli.session import AgentOptions, RunOutcome, build_agent, write_json_event
from ponder.cli.transcript import pending_approval
from ponder.config import AgentConfig
from ponder.exceptions import UserError

if TYPE_CHECKING:
    from ponder.server.launcher import Launcher

__all__ = [
    "DetachOption",
    "NamespaceOption",
    "TaskQueueOption",
    "TemporalOption",
    "cancel_remote",
    "decide_remote",
    "exit_after_temporal",
    "run_remote",
    "serve_launcher",
    "show_remote",
    "worker",
]

T = TypeVar("T")
_USED: list[bool] = []
"""Set once a command of this process has opened a Temporal client."""


def _client_opened() -> None:
    _USED.append(True)


def _on_temporal(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``; a request the Temporal server refuses is one clear error."""
    try:
        from ponder.temporal.client import service_errors  # the `temporal` extra
    except BaseException:
        work.close()  # never started: no "never awaited" warning after the extra's error
        raise
    with service_errors():
        return asyncio.run(work)


def exit_after_temporal(code: int) -> None:
    """End the process now if it used Temporal, skipping interpreter teardown.

    The SDK's Rust threads can abort a finalizing interpreter (temporalio/sdk-python#300).
    """
    if _USED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


TemporalOption = Annotated[
    str | None,
    typer.Option(
        "--temporal", envvar="PONDER_TEMPORAL", help="Temporal server HOST:PORT to run on."
    ),
]
TaskQueueOption = Annotated[
    str | None,
    typer.Option("--task-queue", envvar="PONDER_TASK_QUEUE", help="The workers' task queue."),
]
NamespaceOption = Annotated[str, typer.Option("--namespace", help="The Temporal namespace.")]
DetachOption = Annotated[
    bool, typer.Option("--detach", help="Print the run id and exit; the run goes on.")
]


def _queue(task_queue: str | None) -> str:
    if not task_queue:
        raise UserError("--temporal needs --task-queue NAME (the queue your workers poll)")
    return task_queue


def worker(
    temporal: Annotated[
        str, typer.Option("--temporal", envvar="PONDER_TEMPORAL", help="Temporal server HOST:PORT.")
    ],
    task_queue: Annotated[
        str,
        typer.Option(
            "--task-queue", envvar="PONDER_TASK_QUEUE", help="The task queue to take runs from."
        ),
    ],
    namespace: NamespaceOption = "default",
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    tools: ToolsOption = None,
) -> None:
    """Run a Temporal worker: it runs this agent's runs from the task queue until stopped."""
    loaded: list[AgentConfig] = []
    with reported(loaded):
        agent, agent_config = build_agent(AgentOptions(model, config, workflow, tools=tools))
        loaded.append(agent_config)
        asyncio.run(_serve(agent, temporal, _queue(task_queue), namespace))


async def _serve(agent: Agent, address: str, task_queue: str, namespace: str) -> None:
    from ponder.temporal import build_worker, connect

    _client_opened()
    client = await connect(address, namespace=namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with agent, build_worker(client, task_queue, agent):  # the agent's MCP servers close
        line = f"ponder worker: task queue {task_queue} on {address} ({agent.model.name})"
        print(line, file=sys.stderr, flush=True)
        await stop.wait()


def serve_launcher(address: str, task_queue: str | None, namespace: str) -> Launcher:
    """The ``TemporalLauncher`` for ``ponder serve --temporal``, once the server answers.

    The agent lives on the workers, so agent options do not apply here.
    """
    from ponder.temporal import connect
    from ponder.temporal.launcher import TemporalLauncher

    queue = _queue(task_queue)
    _client_opened()
    asyncio.run(connect(address, namespace=namespace))  # fail now, not at the first run
    return TemporalLauncher(address, queue, namespace=namespace)


async def _follow(remote: Any, run_id: str, after: int, as_json: bool, out: IO[str]) -> RunOutcome:
    outcome = RunOutcome(run_id=run_id)
    if as_json:
        async for event in remote.follow(run_id, after=after):
            outcome.observe(event)
            write_json_event(event, out)
    else:
        with LiveDisplay(Console(highlight=False)) as display:
            async for event in remote.follow(run_id, after=after):
                outcome.observe(event)
                display.update(event)
    if outcome.status == "running":  # it failed or was cancelled: say how
        await remote.result(run_id)
    return outcome


async def _start(
    task: str, address: str, queue: str, namespace: str, as_json: bool, detach: bool
) -> RunOutcome | None:
    from ponder.temporal import TemporalAgent

    _client_opened()
    remote = await TemporalAgent.connect(address, queue, namespace=namespace)
    run_id = await remote.start(task)
    if detach:
        print(run_id, flush=True)
        return None
    return await _follow(remote, run_id, 0, as_json, sys.stdout)


def _report(outcome: RunOutcome | None, address: str, as_json: bool) -> None:
    if outcome is None:
        return
    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    console.print(f"run {outcome.run_id} {outcome.status} · temporal {address}", markup=False)
    if outcome.status != "suspended":
        return
    calls = (outcome.suspension or {}).get("payload", {}).get("calls", [])
    if calls:
        console.print(pending_approval(calls))
    command = f"ponder runs resume {outcome.run_id} --temporal {address} --approve"
    console.print(f"resume with: {command}", markup=False)
    raise typer.Exit(EXIT_SUSPENDED)


def run_remote(
    task: str, address: str, task_queue: str | None, namespace: str, as_json: bool, detach: bool
) -> None:
    """``ponder run --temporal``: start the run on the workers and follow it."""
    with reported():
        queue = _queue(task_queue)
        outcome = _on_temporal(_start(task, address, queue, namespace, as_json, detach))
    _report(outcome, address, as_json)


async def _status(run_id: str, address: str, namespace: str) -> dict[str, Any]:
    from ponder.temporal import TemporalAgent

    _client_opened()
    remote = await TemporalAgent.connect(address, "", namespace=namespace, check_worker=False)
    found: dict[str, Any] = await remote.status(run_id)
    return found


def show_remote(run_id: str, address: str, namespace: str, as_json: bool) -> None:
    """``ponder runs show --temporal``: the run's status and output."""
    with reported():
        found = _on_temporal(_status(run_id, address, namespace))
    if as_json:
        typer.echo(json.dumps(found, ensure_ascii=False, default=str))
        return
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"run {run_id}: {found['status']}", markup=False)
    if found.get("output"):
        console.print(found["output"], markup=False)
    if found.get("error"):
        console.print(f"error: {found['error']}", markup=False)
    suspension = found.get("suspension") or {}
    calls = suspension.get("payload", {}).get("calls", [])
    if calls:
        console.print(pending_approval(calls))
        command = f"ponder runs resume {run_id} --temporal {address} --approve"
        console.print(f"resume with: {command}", markup=False)


async def _decide(
    run_id: str, address: str, namespace: str, decision: Any, as_json: bool
) -> RunOutcome | None:
    from ponder.temporal import TemporalAgent

    _client_opened()
    remote = await TemporalAgent.connect(address, "", namespace=namespace, check_worker=False)
    found = await remote.status(run_id)
    if found["status"] != "suspended":
        raise UserError(f"run {run_id!r} is {found['status']}, not waiting for a decision")
    calls = found["suspension"]["payload"].get("calls", [])
    if isinstance(decision, dict) and decision.get("action") == "reject" and calls:
        decision = {str(c["id"]): decision for c in calls}
    if not await remote.decide(run_id, decision):
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"run {run_id}: decision recorded; no worker answers now, so the run goes on "
            "when a worker for its task queue is up",
            markup=False,
        )
        return None
    return await _follow(remote, run_id, int(found.get("last_seq", 0)), as_json, sys.stdout)


def decide_remote(run_id: str, address: str, namespace: str, decision: Any, as_json: bool) -> None:
    """``ponder runs resume --temporal``: send the decision and follow the run on."""
    with reported():
        if decision is None:
            raise UserError("resuming a run on Temporal needs --approve, --reject or --decision")
        outcome = _on_temporal(_decide(run_id, address, namespace, decision, as_json))
    _report(outcome, address, as_json)


async def _cancel(run_id: str, address: str, namespace: str) -> str:
    from ponder.temporal import TemporalAgent

    _client_opened()
    remote = await TemporalAgent.connect(address, "", namespace=namespace, check_worker=False)
    return await remote.cancel(run_id)


def cancel_remote(run_id: str, address: str, namespace: str) -> None:
    """``ponder runs cancel --temporal``: cancel the run (no worker needed to ask)."""
    with reported():
        status = _on_temporal(_cancel(run_id, address, namespace))
    if status == "cancelling":
        ends = "it ends once its running calls have stopped (or when a worker next runs it)"
        typer.echo(f"run {run_id} cancelling: {ends}")
    else:
        typer.echo(f"run {run_id} {status}")
