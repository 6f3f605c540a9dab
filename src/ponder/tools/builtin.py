"""The built-in "organs of thought": wire names and schemas exactly as the spec gives them.

These are definitions only (what the model is told). Their effects on a run — the
suggested stop, reflection, progress messages — are applied by the agent runtime, which
owns the run state. Schemas are non-strict with ``additionalProperties: false``: a strict
schema would have to mark optional fields required.
"""

from __future__ import annotations

import functools

from ponder.tools.definition import ToolDefinition

__all__ = [
    "AGENT_STOP",
    "CONTROL_TOOLS",
    "PROCESSING_MESSAGE",
    "THINK_AND_REASON",
    "UPDATE_STEP",
    "VERIFY_REASONING",
    "agent_stop_definition",
    "processing_message_definition",
    "think_and_reason_definition",
    "update_step_definition",
    "verify_reasoning_definition",
]

THINK_AND_REASON = "think_and_reason"
PROCESSING_MESSAGE = "processing_message"
AGENT_STOP = "agent_stop"
VERIFY_REASONING = "verify_reasoning"
UPDATE_STEP = "update_step"
CONTROL_TOOLS = frozenset({THINK_AND_REASON, AGENT_STOP, VERIFY_REASONING, UPDATE_STEP})
"""Tools that steer the run rather than act; they never count against call limits."""


def _object(properties: dict[str, dict[str, object]], required: list[str]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


@functools.cache
def think_and_reason_definition(guidance: str = "") -> ToolDefinition:
    """``think_and_reason {last_step, summary}``; ``guidance`` extends the summary's doc."""
    summary_doc = "What you are thinking about now and what you will do next (required)."
    return ToolDefinition(
        name=THINK_AND_REASON,
        description=(
            "Think about what you should do next, always call this tool to think when "
            "completing a tool call."
        ),
        parameters=_object(
            {
                "last_step": {
                    "type": "string",
                    "description": "What the previous step did (may be empty the first time).",
                },
                "summary": {"type": "string", "description": f"{summary_doc} {guidance}".strip()},
            },
            ["summary"],
        ),
    )


@functools.cache
def processing_message_definition() -> ToolDefinition:
    """``processing_message {content}``: tell the user what the agent is doing."""
    return ToolDefinition(
        name=PROCESSING_MESSAGE,
        description=(
            "Describe to the user what you are currently doing or thinking. Use it to "
            "communicate progress, not as a general reply."
        ),
        parameters=_object(
            {
                "content": {
                    "type": "string",
                    "description": "The message, phrased as a short status note.",
                }
            },
            ["content"],
        ),
    )


@functools.cache
def agent_stop_definition() -> ToolDefinition:
    """``agent_stop {result}``: enough information gathered, ready to answer."""
    return ToolDefinition(
        name=AGENT_STOP,
        description=(
            "Signal that you have gathered enough information and are ready to formulate "
            "the final answer. After calling it, do not call any other tools."
        ),
        parameters=_object(
            {
                "result": {
                    "type": "string",
                    "description": "A brief account of what you did in this task (optional).",
                }
            },
            [],
        ),
    )


@functools.cache
def verify_reasoning_definition() -> ToolDefinition:
    """``verify_reasoning {check_type, result, detail}``: check the reasoning chain."""
    return ToolDefinition(
        name=VERIFY_REASONING,
        description=(
            "Before giving the final answer, verify the logical correctness, internal "
            "consistency and completeness of your reasoning chain."
        ),
        parameters=_object(
            {
                "check_type": {
                    "type": "string",
                    "enum": ["self_check", "contradiction_check", "completeness_check"],
                },
                "result": {"type": "string", "enum": ["pass", "warning", "fail"]},
                "detail": {"type": "string", "description": "What the check found."},
            },
            ["check_type", "result", "detail"],
        ),
    )


_PLAN_NODE: dict[str, object] = _object(
    {
        "id": {"type": "string", "description": "A short unique step id."},
        "description": {"type": "string", "description": "What the step must achieve."},
        "depends_on": {"type": "array", "items": {"type": "string"}},
    },
    ["id", "description"],
)


@functools.cache
def update_step_definition() -> ToolDefinition:
    """``update_step {action, dag, node, node_id, note}``: revise the step plan mid-run."""
    return ToolDefinition(
        name=UPDATE_STEP,
        description=(
            "Revise the step plan: 'replan' replaces the remaining steps with 'dag', "
            "'add_step' appends 'node', 'remove_step' drops 'node_id', 'mark_done' closes "
            "'node_id' (default: the current step), 'note' attaches 'note' to a step."
        ),
        parameters=_object(
            {
                "action": {
                    "type": "string",
                    "enum": ["replan", "add_step", "remove_step", "mark_done", "note"],
                },
                "dag": {"type": "array", "items": _PLAN_NODE},
                "node": _PLAN_NODE,
                "node_id": {"type": "string"},
                "note": {"type": "string"},
            },
            ["action"],
        ),
    )
