"""Continuing a stored run from the command line: the decision, the display, the outcome.

The flags give a decision (`decision_flags`), the run's suspension says what it applies
to (`value_for`); `resume_stored` shows the resumed run's events; `report_outcome` names
the stored run and, for a suspended one, the exact command that continues it (exit 3).
"""

from __future__ import annotations

import shlex
import sys
from typing import IO, Any

import typer

from ponder.agent import Agent
from ponder.cli.errors import EXIT_INTERRUPTED, EXIT_RUN_FAILED, EXIT_SUSPENDED
from ponder.cli.options import parse_decision
from ponder.cli.render import LiveDisplay
from ponder.cli.reporting import fail, plain_console
from ponder.cli.run_store import open_cli_store
from ponder.cli.session import AgentOptions, RunOutcome, write_json_event
from ponder.cli.transcript import (
    answer_example,
    pending_approval,
    questions_view,
    resume_command,
)
from ponder.events import Event
from ponder.exceptions import UserError
from ponder.store import StoredRun
from ponder.store.view import pending_calls, pending_questions

__all__ = [
    "ResumeDisplay",
    "continue_command",
    "decision_flags",
    "print_typed_answer",
    "report_outcome",
    "resume_stored",
    "value_for",
]


def continue_command(
    run_id: str, store: str, arguments: list[str], questions: list[dict[str, Any]]
) -> str:
    """The command that continues the run: approve its calls, or answer its questions."""
    if not questions:
        return resume_command(run_id, store, arguments, "--approve")
    return (
        resume_command(run_id, store, arguments, "--answer")
        + " "
        + shlex.quote(answer_example(questions))
    )


def decision_flags(approve: bool, reject: bool, reason: str | None, decision: str | None) -> Any:
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


def value_for(stored: StoredRun, decision: Any, answer: Any = None) -> Any:
    """The resume value for this run: a reject-with-reason applies to every pending call."""
    questions = stored.view.pending_questions
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
    calls = stored.view.pending_calls
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
        self.display = None if as_json else LiveDisplay(plain_console())

    def show(self, event: Event) -> None:
        """The agent's event hook; events of other runs are ignored."""
        if event.run_id != self.outcome.run_id:
            return
        self.outcome.observe(event)
        if self.display is None:
            write_json_event(event, self.out)
        else:
            self.display.update(event)


async def resume_stored(
    agent: Agent,
    url: str | None,
    run_id: str,
    decision: tuple[Any, Any],
    as_json: bool,
    out: IO[str],
) -> RunOutcome:
    """Resume the stored run with ``decision`` (a decision, an answer), showing its events."""
    display = ResumeDisplay(run_id, as_json, out)
    store = open_cli_store(url)
    try:
        stored = await store.load(run_id)
        value = value_for(stored, *decision)
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
        plain_console().print(f"run {run_id} had already completed:\n{result.text}", markup=False)
    return outcome


def report_outcome(
    outcome: RunOutcome, store: str | None, options: AgentOptions, *, as_json: bool
) -> None:
    """Name the stored run; for a suspended one, print its calls and how to resume (exit 3)."""
    if store is None:
        return
    console = plain_console(stderr=as_json)
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
    command = continue_command(outcome.run_id, store, [], questions)
    console.print(f"resume with: {command}", markup=False)
    raise typer.Exit(EXIT_SUSPENDED)


def print_typed_answer(outcome: RunOutcome) -> None:
    """Print a typed run's JSON answer alone on stdout; exit 1 when it did not validate."""
    if outcome.status != "completed":
        return
    if outcome.stop_reason == "invalid_output":
        fail(f"error: the answer does not match --output-schema: {outcome.output}", EXIT_RUN_FAILED)
    typer.echo(outcome.output)
