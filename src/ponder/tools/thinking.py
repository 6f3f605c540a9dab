"""``sequential_thinking``: a stateful scratchpad of numbered thoughts, branches and revisions.

Each run has its own `ThinkingState` (``ctx.state``, given by the executor). A call is
validated completely before anything changes; a refused call changes nothing. The
function never awaits, so reading, computing and committing are one step on the event
loop: parallel calls in one run are serialised even without ``ctx.lock`` (which the
executor holds and this function therefore does not take).

Result ``data`` has exactly the spec's eight fields — ``thought_number``,
``total_thoughts`` (raised to ``thought_number`` when smaller), ``next_thought_needed``,
``branches`` (ids, first-seen order), ``thought_history_length``, ``display_type``
(``"thinking"``), ``thought``, ``incomplete_steps`` (next_thought_needed or
needs_more_thoughts or thought_number < total_thoughts) — plus, only when they apply:
``warnings`` (list of strings), ``branch_contents`` (when
``ThinkingConfig.include_branch_contents``; the newest thoughts within
``max_branch_contents_chars``, ``branch_contents_omitted`` counting the others) and
``node`` (``seq``, ``is_revision``,
``revises_thought``, ``revision_type``, ``supersedes``, ``branch_id``,
``branch_from_thought``) for a revision or branch thought, for a UI that draws a tree.
The text the model reads is the recorded note and any warnings; a branch thought's text
also lists the other branches' thoughts (`other_branches`, within the same cap), so the
model can weigh the alternatives it explored.

Decisions where the existing tools differ or are flawed:
- snake_case names with camelCase aliases; both spellings with different values is an error;
- ``" 3 "`` → 3 and ``2.0`` → 2; ``"2.0"``, ``true``, ``[2]``, ``"0x10"``, ``1.5`` refused;
  numbers above 2^53−1 refused; booleans: ``true``/``false`` and those strings in any case
  only (``"yes"``, ``"1"``, ``1``, ``0`` refused); ``null`` for an optional field = absent;
- empty or whitespace-only thoughts refused; at most ``max_thought_chars`` characters;
- any branch id string is an opaque key (``__proto__`` is a plain id); ``""`` = no branch;
- cross-field inconsistencies (a revision without its target, half a branch, references to
  unknown or later thoughts) are warnings, or refusals when ``strict``; numbering gaps,
  repeats and backward moves are always warnings; unknown keys are ignored with a warning;
- ``thought_history_length`` counts every accepted thought in the run; beyond
  ``max_history`` the oldest are dropped (with a warning) and too many branch ids refused.
"""

from __future__ import annotations

from typing import Any

from ponder.tools.thinking_schema import (
    Spelling,
    ThinkingConfig,
    ThoughtInput,
    describe_problems,
    parse_thought_arguments,
    snake_case_parameters,
)
from ponder.tools.thinking_state import (
    ThinkingState,
    ThoughtEntry,
    ThoughtPlan,
    commit_thought,
    plan_thought,
)
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = [
    "DESCRIPTION",
    "TOOL_NAME",
    "ThinkingConfig",
    "ThinkingState",
    "ThoughtEntry",
    "other_branches",
    "plan_call",
    "record_thought",
    "sequential_thinking_tool",
    "thinking_data",
]

TOOL_NAME = "sequential_thinking"
RECORDED = "Thought process recorded"
RECORDED_INCOMPLETE = (
    "Thought process recorded - unfinished steps remain, continue exploring and calling tools"
)

DESCRIPTION = (
    "Record one step of your reasoning as a numbered thought. Use it for problems that need "
    "several steps, course corrections or comparing alternatives; skip it for simple "
    "questions. Call it once per thought.\n"
    "Thoughts are shown to the user: write them in natural, user-friendly language, saying "
    "what you look for and why. NEVER mention tool names in a thought, and do not put the "
    "final answer here.\n"
    "- thought_number counts from 1; total_thoughts is your current estimate and may change.\n"
    "- Set next_thought_needed to false only when the thinking is done; set "
    "needs_more_thoughts when you need more steps than planned.\n"
    "- To correct an earlier thought, set is_revision and revises_thought; revision_type "
    '"replace" (default) supersedes it, "amend" adds to it.\n'
    "- To explore an alternative, set branch_from_thought and branch_id.\n"
    "Keep thought numbers consecutive."
)


def _incomplete(entry: ThoughtEntry) -> bool:
    return (
        entry.next_thought_needed
        or entry.needs_more_thoughts
        or entry.thought_number < entry.total_thoughts
    )


def _node(plan: ThoughtPlan) -> dict[str, Any]:
    entry = plan.entry
    return {
        "seq": entry.seq,
        "is_revision": entry.is_revision,
        "revises_thought": entry.revises_thought,
        "revision_type": entry.revision_type,
        "supersedes": plan.revision_target if entry.revision_type == "replace" else None,
        "branch_id": entry.branch_id,
        "branch_from_thought": entry.branch_from_thought,
    }


def thinking_data(
    state: ThinkingState, config: ThinkingConfig, plan: ThoughtPlan
) -> dict[str, Any]:
    """The result ``data`` of a committed plan: the spec's eight fields plus extras."""
    entry = plan.entry
    data: dict[str, Any] = {
        "thought_number": entry.thought_number,
        "total_thoughts": entry.total_thoughts,
        "next_thought_needed": entry.next_thought_needed,
        "branches": list(state.branches),
        "thought_history_length": state.recorded,
        "display_type": "thinking",
        "thought": entry.thought,
        "incomplete_steps": _incomplete(entry),
    }
    if plan.warnings:
        data["warnings"] = list(plan.warnings)
    if config.include_branch_contents and state.branches:
        contents, omitted = state.branch_contents_within(config.max_branch_contents_chars)
        data["branch_contents"] = contents
        if omitted:
            data["branch_contents_omitted"] = omitted
    if entry.is_revision or entry.branch_from_thought is not None or entry.branch_id:
        data["node"] = _node(plan)
    return data


def _output(entry: ThoughtEntry, warnings: list[str]) -> str:
    text = RECORDED_INCOMPLETE if _incomplete(entry) else RECORDED
    if warnings:
        text += "\nWarnings:\n" + "\n".join(f"- {w}" for w in warnings)
    return text


def other_branches(state: ThinkingState, config: ThinkingConfig, entry: ThoughtEntry) -> str:
    """What a branch thought's result tells the model of the other branches' thoughts.

    Empty unless ``include_branch_contents`` and ``entry`` is on a branch; the thoughts are
    those of ``branch_contents`` (the newest within ``max_branch_contents_chars``).
    """
    if not config.include_branch_contents or not entry.branch_id:
        return ""
    contents, omitted = state.branch_contents_within(config.max_branch_contents_chars)
    lines = [
        f"- [{branch}] thought {item['thought_number']}: {item['thought']}"
        for branch, items in contents.items()
        if branch != entry.branch_id
        for item in items
    ]
    if omitted:
        lines.append(f"({omitted} older branch thought(s) left out by the size cap)")
    return "\nOther branches:\n" + "\n".join(lines) if lines else ""


def plan_call(
    state: ThinkingState,
    config: ThinkingConfig,
    args: dict[str, Any],
    tool_name: str = TOOL_NAME,
    spelling: Spelling = "snake_case",
) -> ThoughtPlan | str:
    """Validate ``args`` and plan the call: a plan to commit, or the error message."""
    parsed = parse_thought_arguments(args, config, spelling)
    if not isinstance(parsed, ThoughtInput):
        return describe_problems(parsed, tool_name, spelling)
    plan = plan_thought(state, config, parsed)
    if plan.refusals:
        reasons = "\n".join(f"- {r}" for r in plan.refusals)
        return (
            f"thought not recorded:\n{reasons}\nHint: fix the fields named above and call "
            f"{tool_name} again. Nothing was recorded."
        )
    return plan


def record_thought(
    state: ThinkingState, config: ThinkingConfig, args: dict[str, Any]
) -> ToolResult:
    """Validate, plan and commit one call against ``state``; never raises for bad input."""
    outcome = plan_call(state, config, args)
    if isinstance(outcome, str):
        return ToolResult.fail(outcome)
    commit_thought(state, config, outcome)
    text = _output(outcome.entry, outcome.warnings)
    text += other_branches(state, config, outcome.entry)
    return ToolResult.ok(text, thinking_data(state, config, outcome), display="thinking")


def sequential_thinking_tool(config: ThinkingConfig | None = None) -> Tool:
    """The ``sequential_thinking`` tool; each run keeps its own `ThinkingState`."""
    settings = config or ThinkingConfig()

    async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        state = ctx.state
        if not isinstance(state, ThinkingState):
            return ToolResult.fail(
                f"{TOOL_NAME} needs a ThinkingState in its context, got {type(state).__name__}"
            )
        return record_thought(state, settings, args)

    return Tool(
        name=TOOL_NAME,
        description=DESCRIPTION,
        parameters=snake_case_parameters(settings),
        function=run,
        validator=None,
        state_type=ThinkingState,
        builtin=True,
        idempotent=False,
    )
