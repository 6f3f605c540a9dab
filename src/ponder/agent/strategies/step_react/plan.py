"""The step plan: a DAG of steps, validated, ordered, rendered, and revised by ``update_step``.

A plan is valid when its ids are unique and non-empty, every dependency names a step of
the plan, and the dependencies have no cycle. Steps run in dependency order; among the
steps that are ready, the one listed first runs first. Problems are returned as readable
lines so they can be shown to the model as a correction.
"""

from __future__ import annotations

import graphlib
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, StrictBool

from ponder.agent.run.plan_state import PlanStep

__all__ = [
    "DECOMPOSITION_SCHEMA",
    "Decomposition",
    "StepSpec",
    "next_ready_step",
    "pending_steps",
    "plan_problems",
    "render_plan",
    "steps_from_specs",
]

MAX_STEPS = 20


class StepSpec(BaseModel):
    """A step as the model writes it."""

    id: str
    description: str
    depends_on: list[str] = Field(default_factory=list)


class Decomposition(BaseModel):
    """The model's decomposition decision."""

    needs_decomposition: StrictBool
    reason: str = ""
    steps: list[StepSpec] = Field(default_factory=list)


_STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "A short unique id, e.g. 'fetch'."},
        "description": {"type": "string", "description": "What this step must achieve."},
        "depends_on": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Ids of the steps that must finish first.",
        },
    },
    "required": ["id", "description", "depends_on"],
    "additionalProperties": False,
}
DECOMPOSITION_SCHEMA: dict[str, Any] = {
    "title": "task_plan",
    "description": "Whether the task needs several steps, and the steps as a DAG.",
    "type": "object",
    "properties": {
        "needs_decomposition": {"type": "boolean"},
        "reason": {"type": "string"},
        "steps": {"type": "array", "items": _STEP_SCHEMA},
    },
    "required": ["needs_decomposition", "reason", "steps"],
    "additionalProperties": False,
}


def steps_from_specs(specs: Sequence[StepSpec]) -> list[PlanStep]:
    """Plan steps (all pending) from the model's step specs, text trimmed."""
    return [
        PlanStep(
            id=s.id.strip(),
            description=s.description.strip(),
            depends_on=[d.strip() for d in s.depends_on],
        )
        for s in specs
    ]


def plan_problems(plan: Sequence[PlanStep]) -> list[str]:
    """Why ``plan`` is not a valid DAG (empty when it is)."""
    if not plan:
        return ["the plan has no steps"]
    problems = _identity_problems(plan)
    seen = {step.id for step in plan}
    for step in plan:
        for dep in step.depends_on:
            if dep == step.id:
                problems.append(f"step {step.id!r} depends on itself")
            elif dep not in seen:
                problems.append(f"step {step.id!r} depends on unknown step {dep!r}")
    if not problems:
        problems.extend(_cycle_problems(plan))
    return problems


def _identity_problems(plan: Sequence[PlanStep]) -> list[str]:
    problems: list[str] = []
    if len(plan) > MAX_STEPS:
        problems.append(f"the plan has {len(plan)} steps; at most {MAX_STEPS} are allowed")
    seen: set[str] = set()
    for step in plan:
        if not step.id:
            problems.append("a step has an empty id")
        elif step.id in seen:
            problems.append(f"step id {step.id!r} is used more than once")
        seen.add(step.id)
        if not step.description:
            problems.append(f"step {step.id!r} has an empty description")
    return problems


def _cycle_problems(plan: Sequence[PlanStep]) -> list[str]:
    sorter = graphlib.TopologicalSorter({s.id: s.depends_on for s in plan})
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        cycle = " -> ".join(str(node) for node in error.args[1])
        return [f"the dependencies form a cycle: {cycle}"]
    return []


def pending_steps(plan: Sequence[PlanStep]) -> list[PlanStep]:
    """Steps still to run (pending or running)."""
    return [s for s in plan if s.status in ("pending", "running")]


def next_ready_step(plan: Sequence[PlanStep]) -> PlanStep | None:
    """The first pending step whose dependencies are all finished (done or skipped)."""
    finished = {s.id for s in plan if s.status in ("done", "skipped")}
    for step in plan:
        if step.status == "pending" and all(d in finished for d in step.depends_on):
            return step
    return None


_MARKS = {"pending": "[ ]", "running": "[>]", "done": "[x]", "skipped": "[-]"}


def render_plan(plan: Sequence[PlanStep]) -> str:
    """The plan as the model sees it: one line per step with its status and notes."""
    lines = []
    for step in plan:
        after = f" (after {', '.join(step.depends_on)})" if step.depends_on else ""
        line = f"{_MARKS[step.status]} {step.id}: {step.description}{after}"
        if step.summary:
            line += f" — result: {step.summary}"
        lines.append(line)
        lines.extend(f"      note: {note}" for note in step.notes)
    return "\n".join(lines)
