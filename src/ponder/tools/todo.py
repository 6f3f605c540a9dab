"""``todo_write``: the model's plan as a checklist, replaced whole on every call.

Arguments ``{task, steps: [{id, description, status}]}`` with status ``pending``,
``in_progress`` or ``completed`` (any case, surrounding spaces ignored). Ids are strings
or integers (kept as strings) and unique. The result ``output`` is a short Markdown
progress summary; ``data`` carries ``display_type: "plan"``, the task, the steps, the
counts, the ids whose status changed since the previous call and, when they apply,
``warnings`` (more than one step in progress). A refused call leaves the plan as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from ponder.tools.coerce import describe_value
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = ["TOOL_NAME", "TodoState", "TodoStatus", "TodoStep", "todo_write_tool", "write_plan"]

TOOL_NAME = "todo_write"
MAX_STEPS = 50
MAX_TEXT_CHARS = 500
TodoStatus = Literal["pending", "in_progress", "completed"]
_STATUSES: tuple[str, ...] = get_args(TodoStatus)
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}

DESCRIPTION = (
    "Write or update your plan for the current task as a checklist. Send the whole plan "
    "every time: the task and every step with an id, a short description in natural, "
    "user-friendly language (no tool names) and a status: pending, in_progress or "
    "completed. Keep one step in_progress at a time and mark steps completed as soon as "
    "they are done. Use it for tasks with three or more steps; the user sees the plan."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "minLength": 1, "description": "What the plan is for."},
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_STEPS,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": ["string", "integer"], "description": "Unique step id."},
                    "description": {"type": "string", "minLength": 1},
                    "status": {"type": "string", "enum": list(_STATUSES)},
                },
                "required": ["id", "description", "status"],
            },
        },
    },
    "required": ["task", "steps"],
}


class TodoStep(BaseModel):
    """One step of the plan."""

    id: str
    description: str
    status: TodoStatus


class TodoState(BaseModel):
    """The latest plan of one run (empty until the first accepted call)."""

    task: str = ""
    steps: list[TodoStep] = Field(default_factory=list)


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and len(value) <= MAX_TEXT_CHARS:
        return value.strip()
    return None


def _step_id(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(value)


def _status(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().lower() in _STATUSES:
        return value.strip().lower()
    return None


def _problem(field: str, value: Any, expected: str) -> str:
    return f"{field}: received {describe_value(value)}; expected {expected}"


def _missing_or(args: Mapping[str, Any], key: str) -> str:
    return describe_value(args[key]) if key in args else "nothing (missing)"


def _read_step(index: int, raw: Any, seen: set[str], problems: list[str]) -> TodoStep | None:
    where = f"steps[{index}]"
    if not isinstance(raw, Mapping):
        problems.append(_problem(where, raw, "an object {id, description, status}"))
        return None
    step_id, text = _step_id(raw.get("id")), _text(raw.get("description"))
    status = _status(raw.get("status"))
    text_form = f"a non-empty string of at most {MAX_TEXT_CHARS} characters"
    if step_id is None:
        problems.append(_problem(f"{where}.id", raw.get("id"), f"{text_form} or an integer"))
    elif step_id in seen:
        problems.append(_problem(f"{where}.id", raw.get("id"), "an id not used by another step"))
    else:
        seen.add(step_id)
    if text is None:
        problems.append(_problem(f"{where}.description", raw.get("description"), text_form))
    if status is None:
        problems.append(
            _problem(f"{where}.status", raw.get("status"), "one of " + ", ".join(_STATUSES))
        )
    if step_id is None or text is None or status is None:
        return None
    return TodoStep(id=step_id, description=text, status=status)


def parse_plan(args: Any) -> TodoState | list[str]:
    """A validated plan, or every problem in order (task, then each step's fields)."""
    if not isinstance(args, Mapping):
        return [_problem("arguments", args, "a JSON object {task, steps}")]
    problems: list[str] = []
    task = _text(args.get("task"))
    if task is None:
        problems.append(
            f"task: received {_missing_or(args, 'task')}; "
            f"expected a non-empty string of at most {MAX_TEXT_CHARS} characters"
        )
    raw_steps = args.get("steps")
    if not isinstance(raw_steps, list) or not 1 <= len(raw_steps) <= MAX_STEPS:
        problems.append(
            f"steps: received {_missing_or(args, 'steps')}; "
            f"expected an array of 1 to {MAX_STEPS} steps"
        )
        raw_steps = []
    seen: set[str] = set()
    steps = [_read_step(i, raw, seen, problems) for i, raw in enumerate(raw_steps)]
    if problems or task is None:
        return problems
    return TodoState(task=task, steps=[s for s in steps if s is not None])


def _summary(plan: TodoState, warnings: list[str]) -> str:
    done = sum(s.status == "completed" for s in plan.steps)
    lines = [f"**Plan: {plan.task}** — {done}/{len(plan.steps)} completed"]
    for step in plan.steps:
        suffix = " (in progress)" if step.status == "in_progress" else ""
        lines.append(f"- {_MARKS[step.status]} {step.id}. {step.description}{suffix}")
    lines += [f"> Warning: {w}" for w in warnings]
    return "\n".join(lines)


def write_plan(state: TodoState, args: Any) -> ToolResult:
    """Validate ``args`` and replace the plan in ``state``; a refused call changes nothing."""
    plan = parse_plan(args)
    if isinstance(plan, list):
        listed = "\n".join(f"- {p}" for p in plan)
        return ToolResult.fail(
            f"invalid arguments for {TOOL_NAME}:\n{listed}\nHint: send the whole plan as "
            '{"task": "...", "steps": [{"id": "1", "description": "...", "status": "pending"}]}. '
            "The plan was not changed."
        )
    before = {s.id: s.status for s in state.steps}
    changed = [s.id for s in plan.steps if before.get(s.id) != s.status]
    running = [s.id for s in plan.steps if s.status == "in_progress"]
    warnings = (
        [f"{len(running)} steps are in progress; keep one at a time"] if len(running) > 1 else []
    )
    state.task, state.steps = plan.task, plan.steps
    data: dict[str, Any] = {
        "display_type": "plan",
        "task": plan.task,
        "steps": [s.model_dump() for s in plan.steps],
        "completed": sum(s.status == "completed" for s in plan.steps),
        "total": len(plan.steps),
        "in_progress": running,
        "changed": changed,
    }
    if warnings:
        data["warnings"] = warnings
    return ToolResult.ok(_summary(plan, warnings), data, display="plan")


def todo_write_tool() -> Tool:
    """The ``todo_write`` tool; each run keeps its own `TodoState`."""

    async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        if not isinstance(ctx.state, TodoState):
            return ToolResult.fail(f"{TOOL_NAME} needs a TodoState in its context")
        return write_plan(ctx.state, args)

    return Tool(
        name=TOOL_NAME,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        function=run,
        state_type=TodoState,
        builtin=True,
        idempotent=True,
    )
