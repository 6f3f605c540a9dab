"""``ponder runs``: list, show, resume, cancel and prune checkpointed runs.

Every command takes ``--store URL`` (or ``PONDER_STORE``); without it, the default SQLite
file. A run id may be given by any unique prefix. A run that suspends for approval (or
for an MCP server's question) prints its pending calls (or the questions) and the exact
command that continues it, and exits with code 3; the store records how the run's agent
was built, so resuming needs no agent options.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Annotated, Any, TypeVar

import typer
from rich.console import Console

from ponder.agent import Agent
from ponder.cli.errors import EXIT_INTERRUPTED, EXIT_RUN_FAILED, EXIT_SUSPENDED
from ponder.cli.options import (
    ConfigOption,
    JsonOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
    parse_answer,
    parse_decision,
    parse_duration,
)
from ponder.cli.render import LiveDisplay
from ponder.cli.reporting import fail, reported
from ponder.cli.session import (
    AgentOptions,
    RunOutcome,
    build_agent,
    json_stdout,
    write_json_event,
)
from ponder.cli.temporal import NamespaceOption, TemporalOption, decide_remote, show_remote
from ponder.cli.transcript import (
    answer_example,
    conversation,
    pending_approval,
    questions_view,
    resume_command,
    run_header,
    runs_table,
)
from ponder.config import AgentConfig
from ponder.events import Event
from ponder.exceptions import StoreError, UserError
from ponder.server.stored import pending_calls, pending_questions, record_summary, suspension_of
from ponder.store import Store, StoredRun, open_store

__all__ = [
    "open_cli_store",
    "print_typed_answer",
    "recipe_of",
    "report_outcome",
    "resolve_run_id",
    "runs_app",
    "store_label",
]

T = TypeVar("T")
NO_CHECKPOINT = (
    "no checkpoint: the process stopped before the run's first one "
    "(`ponder runs resume` marks it failed; start the task again)"
)
STATUSES = ("running", "completed", "suspended", "failed", "cancelled", "interrupted")

runs_app = typer.Typer(
    help="Checkpointed runs: list, show, resume, cancel and prune them.", no_args_is_help=True
)
RunIdArgument = Annotated[
    str, typer.Argument(help="The run's id, or a unique prefix of it (see `ponder runs list`).")
]


def store_label(url: str | None) -> str:
    """The store a URL names, as a URL (the default SQLite file when None)."""
    if url:
        return url
    from ponder.store.sqlite import default_path

    return f"sqlite:///{default_path()}"


def open_cli_store(url: str | None) -> Store:
    """`open_store`, with file-system failures reported as store errors."""
    try:
        return open_store(url)
    except OSError as error:
        raise StoreError(f"cannot open the store {store_label(url)}: {error}") from None


async def resolve_run_id(store: Store, text: str) -> str:
    """The stored run id ``text`` is, or is the unique prefix of."""
    found = await store.find_ids(text, limit=6)
    if text in found or len(found) == 1:
        return text if text in found else found[0]
    if not found:
        raise StoreError(f"no stored run with id {text!r}")
    shown = ", ".join(found[:5])
    raise UserError(f"run id prefix {text!r} is ambiguous: it starts {shown}; give more of it")


async def _load(store: Store, text: str) -> StoredRun:
    return await store.load(await resolve_run_id(store, text))


def recipe_of(stored: StoredRun) -> dict[str, Any]:
    """How the stored run's agent was built (``{}`` for a run stored before recipes)."""
    vm = stored.header.get("vm")
    state = vm.get("state") if isinstance(vm, dict) else None
    found = state.get("recipe") if isinstance(state, dict) else None
    return found if isinstance(found, dict) else {}


def _with_store(url: str | None, action: Callable[[Store], Awaitable[T]]) -> T:
    async def work() -> T:
        store = open_cli_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    return asyncio.run(work())


def _console(stderr: bool = False) -> Console:
    return Console(highlight=False, stderr=stderr, soft_wrap=True)


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, default=str))


@runs_app.command("list")
def list_runs(
    store: StoreOption = None,
    status: Annotated[str | None, typer.Option(help=f"Only runs in: {', '.join(STATUSES)}.")] = (
        None
    ),
    limit: Annotated[int, typer.Option(help="At most this many runs.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """Stored runs, newest first."""
    with reported():
        if status is not None and status not in STATUSES:
            raise UserError(f"--status {status!r} is not one of {', '.join(STATUSES)}")
        if limit < 1:
            raise UserError(f"--limit must be 1 or more, got {limit}")
        records = _with_store(store, lambda s: s.list_runs(status=status, limit=limit))
    if as_json:
        _echo_json({"store": store_label(store), "runs": [record_summary(r) for r in records]})
    elif not records:
        typer.echo(f"no runs in {store_label(store)}")
    else:
        _console().print(runs_table(records))


def _show_json(stored: StoredRun) -> dict[str, Any]:
    suspension = suspension_of(stored)
    return {
        **record_summary(stored.record),
        "suspension": suspension,
        "pending_calls": pending_calls(suspension),
        "pending_questions": pending_questions(suspension),
        "conversation": stored.messages,
    }


@runs_app.command()
def show(
    run_id: RunIdArgument,
    store: StoreOption = None,
    as_json: JsonOption = False,
    temporal: TemporalOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """A stored run: status, task, the conversation, and any calls awaiting approval."""
    if temporal:
        show_remote(run_id, temporal, namespace, as_json)
        return
    with reported():
        stored = _with_store(store, lambda s: _load(s, run_id))
        messages = stored.ledger_messages()
    run_id = stored.record.run_id
    if as_json:
        _echo_json(_show_json(stored))
        return
    console = _console()
    console.print(run_header(stored.record))
    if not stored.has_checkpoint:
        console.print(NO_CHECKPOINT, markup=False)
    console.print(conversation(messages))
    suspension = suspension_of(stored)
    calls, questions = pending_calls(suspension), pending_questions(suspension)
    if calls or questions:
        console.print(pending_approval(calls) if calls else questions_view(questions))
        command = _continue_command(run_id, store_label(store), [], questions)
        console.print(f"resume with: {command}", markup=False)


def _continue_command(
    run_id: str, store: str, arguments: list[str], questions: list[dict[str, Any]]
) -> str:
    if not questions:
        return resume_command(run_id, store, arguments, "--approve")
    import shlex

    return (
        resume_command(run_id, store, arguments, "--answer")
        + " "
        + shlex.quote(answer_example(questions))
    )


def _decision_flags(approve: bool, reject: bool, reason: str | None, decision: str | None) -> Any:
    """The decision the flags give: a value, ``_PER_CALL_REASON`` or None (no decision)."""
    given = [flag for flag, on in (("--approve", approve), ("--reject", reject)) if on]
    given += ["--decision"] if decision is not None else []
    if len(given) > 1:
        raise UserError(f"give only one of --approve, --reject, --decision (got {' '.join(given)})")
    if reason is not None and not reject:
        raise UserError("--reason goes with --reject")
    if decision is not None:
        return parse_decision(decision)
    if approve:
        return "approve"
    if reject:
        return "reject" if reason is None else {"action": "reject", "reason": reason}
    return None


def _value_for(stored: StoredRun, decision: Any, answer: Any = None) -> Any:
    """The resume value for this run: a reject-with-reason applies to every pending call."""
    questions = pending_questions(suspension_of(stored))
    if questions:
        if answer is None:
            ids = ", ".join(f"{q.get('id')} ({q.get('message')!r})" for q in questions)
            raise UserError(
                f"run {stored.record.run_id!r} waits for answers to MCP questions {ids}: "
                f"pass --answer JSON, e.g. --answer '{answer_example(questions)}'"
            )
        return answer
    if answer is not None:
        raise UserError(
            f"run {stored.record.run_id!r} waits for no answer: --answer does not apply"
        )
    calls = pending_calls(suspension_of(stored))
    if calls and decision is None:
        names = ", ".join(f"{c.get('name')} [{c.get('id')}]" for c in calls)
        raise UserError(
            f"run {stored.record.run_id!r} waits for approval of {names}: "
            "pass --approve, --reject [--reason R] or --decision JSON"
        )
    if isinstance(decision, dict) and decision.get("action") == "reject" and calls:
        return {str(c.get("id")): decision for c in calls}
    return decision


class ResumeDisplay:
    """Shows a resumed run's events (live view or JSON lines) and records its outcome."""

    def __init__(self, run_id: str, as_json: bool, out: IO[str] | None = None) -> None:
        self.outcome = RunOutcome(run_id=run_id, status="completed")
        self.as_json = as_json
        self.out = out or sys.stdout
        self.display = None if as_json else LiveDisplay(_console())

    def show(self, event: Event) -> None:
        """The agent's event hook; events of other runs are ignored."""
        if event.run_id != self.outcome.run_id:
            return
        self.outcome.observe(event)
        if self.display is None:
            write_json_event(event, self.out)
        else:
            self.display.update(event)


async def _resume(
    agent: Agent,
    url: str | None,
    run_id: str,
    decision: tuple[Any, Any],
    as_json: bool,
    out: IO[str],
) -> RunOutcome:
    display = ResumeDisplay(run_id, as_json, out)
    store = open_cli_store(url)
    try:
        stored = await store.load(run_id)
        value = _value_for(stored, *decision)
        agent.on_event("*")(display.show)
        if display.display is None or stored.record.status == "completed":
            result = await agent.resume(run_id, value, store=store)
        else:
            with display.display:
                result = await agent.resume(run_id, value, store=store)
    finally:
        await store.close()
    outcome = display.outcome
    outcome.status, outcome.output = result.status, result.text
    outcome.suspension = result.suspension
    if stored.record.status == "completed" and not as_json:
        _console().print(f"run {run_id} had already completed:\n{result.text}", markup=False)
    return outcome


@runs_app.command()
def resume(
    run_id: RunIdArgument,
    store: StoreOption = None,
    approve: Annotated[bool, typer.Option("--approve", help="Approve every pending call.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Reject every pending call.")] = False,
    reason: Annotated[str | None, typer.Option(help="Why the calls are rejected.")] = None,
    decision: Annotated[
        str | None,
        typer.Option(help='JSON: "approve", "reject" or {"<call id>": decision, ...}.'),
    ] = None,
    answer: Annotated[
        str | None,
        typer.Option(
            help='JSON answer to an MCP server\'s question: {"action": "accept", "content": '
            '{...}}, "decline", "cancel", or {"<question id>": answer, ...}.'
        ),
    ] = None,
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    tools: ToolsOption = None,
    as_json: JsonOption = False,
    temporal: TemporalOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Continue a suspended or crashed run, with the agent rebuilt from the options.

    With --temporal HOST:PORT the decision goes to the run on Temporal (no agent needed).
    """
    if temporal:
        with reported():
            value = _decision_flags(approve, reject, reason, decision)
        decide_remote(run_id, temporal, namespace, value, as_json)
        return
    loaded: list[AgentConfig] = []
    given = AgentOptions(model, config, workflow, tools=tools)
    with reported(loaded):
        value = _decision_flags(approve, reject, reason, decision)
        stored = _with_store(store, lambda s: _load(s, run_id))
        run_id = stored.record.run_id
        options = AgentOptions.from_recipe(recipe_of(stored), given)
        answered = parse_answer(answer) if answer is not None else None
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        with json_stdout(as_json) as out:
            outcome = asyncio.run(_resume(agent, store, run_id, (value, answered), as_json, out))
    report_outcome(outcome, store_label(store), options, as_json=as_json)


def report_outcome(
    outcome: RunOutcome, store: str | None, options: AgentOptions, *, as_json: bool
) -> None:
    """Name the stored run; for a suspended one, print its calls and how to resume (exit 3)."""
    if store is None:
        return
    console = _console(stderr=as_json)
    if outcome.status in ("interrupted", "cancelled"):
        console.print(f"run {outcome.run_id} {outcome.status} · store {store}", markup=False)
        if outcome.status == "interrupted":
            command = resume_command(outcome.run_id, store, [], "")
            console.print(f"resume with: {command}", markup=False)
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.status != "suspended":
        console.print(f"run {outcome.run_id} {outcome.status} · store {store}", markup=False)
        return
    console.print(f"run {outcome.run_id} suspended · store {store}", markup=False)
    calls, questions = pending_calls(outcome.suspension), pending_questions(outcome.suspension)
    if calls:
        console.print(pending_approval(calls))
    if questions:
        console.print(questions_view(questions))
    command = _continue_command(outcome.run_id, store, [], questions)
    console.print(f"resume with: {command}", markup=False)
    raise typer.Exit(EXIT_SUSPENDED)


def print_typed_answer(outcome: RunOutcome) -> None:
    """Print a typed run's JSON answer alone on stdout; exit 1 when it did not validate."""
    if outcome.status != "completed":
        return
    if outcome.stop_reason == "invalid_output":
        fail(f"error: the answer does not match --output-schema: {outcome.output}", EXIT_RUN_FAILED)
    typer.echo(outcome.output)


@runs_app.command()
def cancel(run_id: RunIdArgument, store: StoreOption = None) -> None:
    """Mark a suspended or crashed run cancelled, so it is never resumed."""

    async def mark(chosen: Store) -> tuple[str, str]:
        stored = await _load(chosen, run_id)
        found, status = stored.record.run_id, stored.record.status
        if status == "completed":
            raise UserError(f"run {found!r} already completed; there is nothing to cancel")
        if status != "cancelled":
            await chosen.set_status(found, "cancelled")
        return found, status

    with reported():
        found, before = _with_store(store, mark)
    typer.echo(f"run {found} cancelled (was {before})")


@runs_app.command()
def prune(
    store: StoreOption = None,
    keep: Annotated[int | None, typer.Option(help="Keep the newest N runs.")] = None,
    older_than: Annotated[
        str | None, typer.Option(help="Delete runs not updated for this long: 90m, 12h, 7d, 2w.")
    ] = None,
) -> None:
    """Delete old runs: beyond the newest --keep N, and/or not updated for --older-than."""
    with reported():
        if keep is None and older_than is None:
            raise UserError("give --keep N and/or --older-than DURATION (e.g. 7d)")
        if keep is not None and keep < 0:
            raise UserError(f"--keep must be 0 or more, got {keep}")
        seconds = parse_duration(older_than) if older_than is not None else None
        count = _with_store(store, lambda s: s.prune(keep_last=keep, older_than=seconds))
    typer.echo(f"pruned {count} run(s) from {store_label(store)}")
