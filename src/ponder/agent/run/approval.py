"""Human approval of tool calls: suspending a run on them, and applying the decision.

A tool marked ``requires_approval`` suspends the run with the pending calls as payload
(`hold_for_approval`); their ids are kept in ``RunState.awaiting_approval`` and the answers
of the batch's other calls are saved, so the resumed run redoes nothing. The run is resumed
with a decision (`accept_decision` checks it): ``"approve"`` / ``True`` or ``"reject"`` /
``False`` for every pending call, or a mapping from call id to ``"approve"``, ``"reject"``,
``{"action": "reject", "reason": "..."}`` or ``{"action": "edit", "arguments": {...}}``.
`approval_decision` then tells, per call, whether it runs (maybe edited), is refused, or
still waits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ponder.exceptions import Suspend, UserError
from ponder.messages import ToolCallPart, ToolMessage
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = [
    "accept_decision",
    "approval_decision",
    "approval_payload",
    "approval_settled",
    "check_decision",
    "decide",
    "hold_for_approval",
]

_ALL = {"approve": "approve", "reject": "reject", True: "approve", False: "reject"}


def approval_payload(calls: Sequence[ToolCallPart]) -> dict[str, Any]:
    """The suspension payload: the calls that wait for a decision."""
    return {
        "calls": [
            {"id": c.id, "name": c.name, "arguments": c.args if c.args is not None else c.arguments}
            for c in calls
        ]
    }


async def hold_for_approval(
    ctx: RunContext, waiting: Sequence[ToolCallPart], answers: dict[str, ToolMessage]
) -> NoReturn:
    """Suspend the run on ``waiting``, saving the batch's ``answers`` so far.

    Built-ins' effects are in the suspended state, so their answers are kept as effects
    like any finished call's: the resumed run uses them instead of applying them twice.
    """
    checkpointer = ctx.checkpointer
    if checkpointer is not None:
        for call_id, answer in answers.items():
            if checkpointer.saved(call_id) is None:
                await checkpointer.save(answer)
    ctx.state.awaiting_approval = [c.id for c in waiting]
    raise Suspend("approval", approval_payload(waiting))


def approval_settled(ctx: RunContext) -> None:
    """Every call of the batch is answered: nothing waits any more."""
    ctx.state.awaiting_approval = []


def accept_decision(ctx: RunContext, value: Any, *, suspended: bool) -> None:
    """Check a resume value against the calls the run waits for, and keep it for them."""
    if suspended and ctx.state.awaiting_input:
        from ponder.agent.run.elicitation import accept_answers

        accept_answers(ctx, value)
        ctx.decision = None
        return
    awaiting = ctx.state.awaiting_approval
    if suspended and awaiting:
        check_decision(value, awaiting)
    ctx.decision = value if suspended else None


def approval_decision(ctx: RunContext, call: ToolCallPart) -> ToolCallPart | ToolMessage | None:
    """What becomes of ``call``, which needs approval: see `decide` (None while it waits)."""
    waited = call.id in ctx.state.awaiting_approval
    return decide(call, ctx.decision if waited else None)


def _check_one(call_id: str, decision: Any) -> None:
    if decision in ("approve", "reject"):
        return
    if isinstance(decision, dict):
        action = decision.get("action")
        if action == "reject":
            return
        if action == "edit" and isinstance(decision.get("arguments"), dict):
            return
    raise UserError(
        f"decision for call {call_id!r} must be 'approve', 'reject', "
        "{'action': 'reject', 'reason': ...} or {'action': 'edit', 'arguments': {...}}; "
        f"got {decision!r}"
    )


def check_decision(value: Any, pending: Sequence[str]) -> None:
    """Raise ``UserError`` unless ``value`` decides every pending call."""
    if isinstance(value, bool | str) and value in _ALL:
        return
    if not isinstance(value, dict):
        raise UserError(
            "resume a run waiting for approval with 'approve', 'reject', or a mapping "
            f"from call id to a decision; got {value!r}"
        )
    missing = [c for c in pending if c not in value]
    if missing:
        raise UserError(f"no decision for pending call(s): {', '.join(missing)}")
    for call_id in pending:
        _check_one(call_id, value[call_id])


def decide(call: ToolCallPart, value: Any) -> ToolCallPart | ToolMessage | None:
    """Apply a checked decision: the call to run, the refusal to record, or None (undecided)."""
    if value is None:
        return None
    decision = _ALL[value] if isinstance(value, bool | str) else value[call.id]
    if decision == "approve":
        return call
    if isinstance(decision, dict) and decision["action"] == "edit":
        args = decision["arguments"]
        return ToolCallPart(id=call.id, name=call.name, arguments=json.dumps(args), args=args)
    reason = decision.get("reason", "") if isinstance(decision, dict) else ""
    refusal = "the user rejected this call" + (f": {reason}" if reason else "")
    return ToolResult.fail(refusal).to_message(call)
