"""``update_step``: revising the plan mid-run, validated like the plan itself.

Actions: ``replan`` (the whole remaining DAG; finished steps are kept), ``add_step``,
``remove_step``, ``mark_done`` and ``note``. A revision that would leave an invalid plan is
refused with every problem named, and the plan stays as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ponder.agent.run.plan_state import PlanStep
from ponder.agent.strategies.step_react.plan import StepSpec, plan_problems, steps_from_specs
from ponder.tools.arguments import ArgumentError, ArgumentIssue

__all__ = ["ACTIONS", "PlanChange", "apply_update"]

ACTIONS = ("replan", "add_step", "remove_step", "mark_done", "note")


@dataclass(frozen=True, slots=True)
class PlanChange:
    """A revised plan, what to tell the model, and whether the current step ends."""

    plan: list[PlanStep]
    message: str
    ends_current: bool = False


def apply_update(plan: Sequence[PlanStep], current: str | None, args: dict[str, Any]) -> PlanChange:
    """Apply one ``update_step`` call; raise `ArgumentError` naming what is wrong."""
    action = args.get("action")
    if action not in ACTIONS:
        expected = " | ".join(ACTIONS)
        raise ArgumentError([ArgumentIssue("action", f"expected one of {expected}")])
    work = [step.model_copy(deep=True) for step in plan]
    if action == "replan":
        change = _replan(work, current, args)
    elif action == "add_step":
        change = _add(work, args)
    elif action == "remove_step":
        change = _remove(work, current, _step_id(args, current, work))
    elif action == "mark_done":
        change = _mark_done(work, current, _step_id(args, current, work), _note(args))
    else:
        change = _annotate(work, _step_id(args, current, work), _note(args, required=True))
    problems = plan_problems(change.plan)
    if problems:
        raise ArgumentError([ArgumentIssue("plan", p) for p in problems])
    return change


def _specs(value: Any, field: str) -> list[StepSpec]:
    items = value if isinstance(value, list) else [value]
    try:
        return [StepSpec.model_validate(item) for item in items]
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ArgumentError([ArgumentIssue(field, f"{where}: {first['msg']}")]) from None


def _replan(work: list[PlanStep], current: str | None, args: dict[str, Any]) -> PlanChange:
    if not isinstance(args.get("dag"), list) or not args["dag"]:
        raise ArgumentError([ArgumentIssue("dag", "replan needs the new steps as a list")])
    finished = [s for s in work if s.status in ("done", "skipped")]
    fresh = steps_from_specs(_specs(args["dag"], "dag"))
    reused = sorted({s.id for s in fresh} & {s.id for s in finished})
    if reused:
        issue = f"steps {', '.join(reused)} are already finished; give new steps new ids"
        raise ArgumentError([ArgumentIssue("dag", issue)])
    for step in fresh:
        if step.id == current:
            step.status = "running"
    ends = current is not None and all(s.id != current for s in fresh)
    message = f"Plan replaced: {len(fresh)} step(s) to do."
    return PlanChange([*finished, *fresh], message, ends)


def _add(work: list[PlanStep], args: dict[str, Any]) -> PlanChange:
    if not isinstance(args.get("node"), dict):
        raise ArgumentError([ArgumentIssue("node", "add_step needs node {id, description}")])
    added = steps_from_specs(_specs(args["node"], "node"))[0]
    return PlanChange([*work, added], f"Step {added.id!r} added.")


def _step_id(args: dict[str, Any], current: str | None, work: list[PlanStep]) -> str:
    value = args.get("node_id") or current
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError([ArgumentIssue("node_id", "name the step (a step id)")])
    if all(s.id != value.strip() for s in work):
        known = ", ".join(s.id for s in work)
        raise ArgumentError([ArgumentIssue("node_id", f"no step {value!r}; steps: {known}")])
    return value.strip()


def _note(args: dict[str, Any], *, required: bool = False) -> str:
    value = args.get("note")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError([ArgumentIssue("note", "expected a non-empty string")])
    return value.strip()


def _remove(work: list[PlanStep], current: str | None, step_id: str) -> PlanChange:
    step = next(s for s in work if s.id == step_id)
    if step.status in ("done", "skipped"):
        raise ArgumentError([ArgumentIssue("node_id", f"step {step_id!r} is already finished")])
    waiting = [s.id for s in work if step_id in s.depends_on]
    if waiting:
        issue = f"steps {', '.join(waiting)} depend on {step_id!r}; remove them first or replan"
        raise ArgumentError([ArgumentIssue("node_id", issue)])
    rest = [s for s in work if s.id != step_id]
    return PlanChange(rest, f"Step {step_id!r} removed.", step_id == current)


def _mark_done(work: list[PlanStep], current: str | None, step_id: str, note: str) -> PlanChange:
    step = next(s for s in work if s.id == step_id)
    if step.status in ("done", "skipped"):
        raise ArgumentError([ArgumentIssue("node_id", f"step {step_id!r} is already finished")])
    if step_id == current:
        if note:
            step.notes.append(note)
        return PlanChange(work, f"Step {step_id!r} will be closed now.", True)
    step.status, step.summary = "done", note or "marked done"
    return PlanChange(work, f"Step {step_id!r} marked done.")


def _annotate(work: list[PlanStep], step_id: str, note: str) -> PlanChange:
    next(s for s in work if s.id == step_id).notes.append(note)
    return PlanChange(work, f"Note added to step {step_id!r}.")
