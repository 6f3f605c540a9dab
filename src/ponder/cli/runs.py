"""``ponder runs``: list, show, resume, cancel and prune checkpointed runs.

Every command takes ``--store URL`` (or ``PONDER_STORE``); without it, the default SQLite
file. A run id may be given by any unique prefix. A run that suspends for approval (or
for an MCP server's question) prints its pending calls (or the questions) and the exact
command that continues it, and exits with code 3; the store records how the run's agent
was built, so resuming needs no agent options (see ``ponder.cli.resuming``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer

from ponder.cli.options import (
    ConfigOption,
    JsonOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
    parse_answer,
    parse_duration,
)
from ponder.cli.reporting import plain_console, reported
from ponder.cli.resuming import (
    continue_command,
    decision_flags,
    print_typed_answer,
    report_outcome,
    resume_stored,
)
from ponder.cli.run_store import (
    load_run,
    open_cli_store,
    resolve_run_id,
    store_label,
    with_store,
)
from ponder.cli.session import AgentOptions, build_agent, json_stdout
from ponder.cli.temporal import (
    NamespaceOption,
    TemporalOption,
    cancel_remote,
    decide_remote,
    show_remote,
)
from ponder.cli.transcript import (
    conversation,
    pending_approval,
    questions_view,
    run_header,
    runs_table,
)
from ponder.config import AgentConfig
from ponder.exceptions import UserError
from ponder.server.stored import record_summary
from ponder.status import RUN_STATUSES
from ponder.store import Store, StoredRun

__all__ = [
    "open_cli_store",
    "print_typed_answer",
    "report_outcome",
    "resolve_run_id",
    "runs_app",
    "store_label",
]

NO_CHECKPOINT = (
    "no checkpoint: the process stopped before the run's first one "
    "(`ponder runs resume` marks it failed; start the task again)"
)
STATUSES = RUN_STATUSES

runs_app = typer.Typer(
    help="Checkpointed runs: list, show, resume, cancel and prune them.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
RunIdArgument = Annotated[
    str, typer.Argument(help="The run's id, or a unique prefix of it (see `ponder runs list`).")
]


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
        records = with_store(store, lambda s: s.list_runs(status=status, limit=limit))
    if as_json:
        _echo_json({"store": store_label(store), "runs": [record_summary(r) for r in records]})
    elif not records:
        typer.echo(f"no runs in {store_label(store)}")
    else:
        plain_console().print(runs_table(records))


def _show_json(stored: StoredRun) -> dict[str, Any]:
    view = stored.view
    return {
        **record_summary(stored.record),
        "suspension": None if view.suspension is None else view.suspension.to_dict(),
        "pending_calls": view.pending_calls,
        "pending_questions": view.pending_questions,
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
        stored = with_store(store, lambda s: load_run(s, run_id))
        messages, view = stored.ledger_messages(), stored.view
    run_id = stored.record.run_id
    if as_json:
        _echo_json(_show_json(stored))
        return
    console = plain_console()
    console.print(run_header(stored.record))
    if not view.has_checkpoint:
        console.print(NO_CHECKPOINT, markup=False)
    console.print(conversation(messages))
    calls, questions = view.pending_calls, view.pending_questions
    if calls or questions:
        console.print(pending_approval(calls) if calls else questions_view(questions))
        command = continue_command(run_id, store_label(store), [], questions)
        console.print(f"resume with: {command}", markup=False)


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
            value = decision_flags(approve, reject, reason, decision)
            if answer is not None:
                value = parse_answer(answer)
        decide_remote(run_id, temporal, namespace, value, as_json)
        return
    loaded: list[AgentConfig] = []
    given = AgentOptions(model, config, workflow, tools=tools)
    with reported(loaded):
        value = decision_flags(approve, reject, reason, decision)
        stored = with_store(store, lambda s: load_run(s, run_id))
        run_id = stored.record.run_id
        options = AgentOptions.from_recipe(dict(stored.view.recipe), given)
        answered = parse_answer(answer) if answer is not None else None
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        with json_stdout(as_json) as out:
            outcome = asyncio.run(
                resume_stored(agent, store, run_id, (value, answered), as_json, out)
            )
    report_outcome(outcome, store_label(store), options, as_json=as_json)


@runs_app.command()
def cancel(
    run_id: RunIdArgument,
    store: StoreOption = None,
    temporal: TemporalOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Mark a suspended or crashed run cancelled, so it is never resumed.

    With --temporal HOST:PORT the run on Temporal is cancelled (no worker needed to ask).
    """
    if temporal:
        cancel_remote(run_id, temporal, namespace)
        return

    async def mark(chosen: Store) -> tuple[str, str]:
        stored = await load_run(chosen, run_id)
        found, status = stored.record.run_id, stored.record.status
        if status == "completed":
            raise UserError(f"run {found!r} already completed; there is nothing to cancel")
        if status != "cancelled":
            await chosen.set_status(found, "cancelled")
        return found, status

    with reported():
        found, before = with_store(store, mark)
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
        count = with_store(store, lambda s: s.prune(keep_last=keep, older_than=seconds))
    typer.echo(f"pruned {count} run(s) from {store_label(store)}")
