"""Human approval of tool calls: suspending a run on them, and applying the decision.

A tool marked ``requires_approval`` suspends the run with the pending calls as payload
(`hold_for_approval`); their ids are kept in ``RunState.awaiting_approval`` and the answers
of the batch's other calls are saved, so the resumed run redoes nothing. The run is resumed
with a decision (`accept_decision` checks it): ``"approve"`` / ``True`` or ``"reject"`` /
``False`` for every pending call, or a mapping from call id to ``"approve"``, ``"reject"``,
``{"action": "reject", "reason": "..."}``, ``{"action": "edit", "arguments": {...}}`` or
``{"action": "result", "output": "..."}`` (the call's answer, given instead of running it:
how the caller answers an external tool's call, see ``ponder.tools.external``).
`approval_decision` then tells, per call, whether it runs (maybe edited), is refused, or
still waits.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn

from ponder.agent.run.elicitation import accept_answers, check_answers
from ponder.exceptions import Suspend, UserError
from ponder.messages import AssistantMessage, ToolCallPart, ToolMessage
from ponder.tools.external import is_external
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = [
    "accept_decision",
    "approval_decision",
    "approval_payload",
    "approval_settled",
    "check_child_decisions",
    "check_decision",
    "check_pending_tools",
    "decide",
    "hold_for_approval",
]

_NO_CHILDREN: Mapping[str, Any] = MappingProxyType({})
_ALL = {"approve": "approve", "reject": "reject", True: "approve", False: "reject"}


def approval_payload(
    calls: Sequence[ToolCallPart],
    external: Collection[str] = (),
    children: Mapping[str, Any] = _NO_CHILDREN,
) -> dict[str, Any]:
    """The suspension payload: the calls that wait for a decision (or, external, a result).

    A sub-agent's call that waits carries the child's suspension as ``sub_agent`` (its
    ``run_id``, ``reason`` and ``payload``): the decision for the call is the child's.
    """
    entries = []
    for c in calls:
        entry: dict[str, Any] = {
            "id": c.id,
            "name": c.name,
            "arguments": c.args if c.args is not None else c.arguments,
        }
        if c.name in external:
            entry["external"] = True
        child = children.get(c.id)
        if child is not None:
            entry["sub_agent"] = {"run_id": child["run_id"], **(child["suspension"] or {})}
        entries.append(entry)
    return {"calls": entries}


async def hold_for_approval(
    ctx: RunContext,
    waiting: Sequence[ToolCallPart],
    answers: dict[str, ToolMessage],
    children: Mapping[str, Any] = _NO_CHILDREN,
) -> NoReturn:
    """Suspend the run on ``waiting``, saving the batch's ``answers`` so far.

    ``children`` holds the data of the sub-agent calls whose child waits, by call id.
    Built-ins' effects are in the suspended state, so their answers are kept as effects
    like any finished call's: the resumed run uses them instead of applying them twice.
    """
    checkpointer = ctx.checkpointer
    if checkpointer is not None:
        for call_id, answer in answers.items():
            if checkpointer.saved(call_id) is None:
                await checkpointer.save(answer)
    ctx.state.awaiting_approval = tuple(c.id for c in waiting)
    external = {c.name for c in waiting if is_external(ctx.tools.get(c.name))}
    raise Suspend("approval", approval_payload(waiting, external, children))


def approval_settled(ctx: RunContext) -> None:
    """Every call of the batch is answered: nothing waits any more."""
    if ctx.state.awaiting_approval:  # a state assignment costs more than this test
        ctx.state.awaiting_approval = ()


def accept_decision(ctx: RunContext, value: Any, *, suspended: bool) -> None:
    """Check a resume value against the calls the run waits for, and keep it for them.

    ``ctx`` must be a context built to be resumed (one with ``resumed``).
    """
    resumed = ctx.resumed
    assert resumed is not None, "a resumed run's context is built with `Resumed`"
    if suspended and ctx.state.awaiting_input:
        accept_answers(ctx, value)
        resumed.decision = None
        return
    awaiting = ctx.state.awaiting_approval
    if suspended and awaiting:
        children = [c.id for c in _awaited_calls(ctx) if _runs_sub_agent(ctx, c)]
        check_decision(value, awaiting, children)
    resumed.decision = value if suspended else None


def _awaited_calls(ctx: RunContext) -> list[ToolCallPart]:
    """The calls of the latest assistant message that wait for a decision."""
    awaiting = ctx.state.awaiting_approval
    message = next(
        (m for m in reversed(ctx.state.ledger.messages) if isinstance(m, AssistantMessage)), None
    )
    return [c for c in (message.tool_calls if message else ()) if c.id in awaiting]


def _runs_sub_agent(ctx: RunContext, call: ToolCallPart) -> bool:
    tool = ctx.tools.get(call.name)
    return tool is not None and tool.metadata.get("agent") is not None


def check_pending_tools(ctx: RunContext) -> None:
    """Refuse (`UserError`) a decision that would run a pending call this agent cannot run.

    Checked before the run changes, so the decision is not used up on an "unknown tool".
    """
    if not ctx.state.awaiting_approval or ctx.decision is None:
        return
    calls = _awaited_calls(ctx)
    missing = sorted(
        {
            c.name
            for c in calls
            if ctx.tools.get(c.name) is None and isinstance(decide(c, ctx.decision), ToolCallPart)
        }
    )
    if missing:
        raise UserError(
            f"run {ctx.state.run_id!r} waits on calls to {', '.join(map(repr, missing))}, which "
            "this agent does not offer: resume it with the tools it was started with "
            "(--tools, the MCP servers); the run was not changed"
        )


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
        if action == "result" and isinstance(decision.get("output"), str):
            return
    raise UserError(
        f"decision for call {call_id!r} must be 'approve', 'reject', "
        "{'action': 'reject', 'reason': ...}, {'action': 'edit', 'arguments': {...}} or "
        f"{{'action': 'result', 'output': '...'}}; got {decision!r}"
    )


def check_child_decisions(suspension: Mapping[str, Any] | None, value: Any) -> None:
    """Refuse (`UserError`) a decision that a waiting sub-agent would refuse.

    ``suspension`` is the run's (``{"reason", "payload"}``): each call whose child waits
    carries the child's suspension, so the whole tree is checked before any run changes.
    """
    from ponder.store.view import pending_calls, pending_questions  # only on such a resume

    for call in pending_calls(suspension):
        child = call.get("sub_agent")
        if not isinstance(child, dict):
            continue
        decision = value.get(call["id"]) if isinstance(value, dict) else value
        if child.get("reason") == "elicitation":
            check_answers(pending_questions(child), decision)
        elif child.get("reason") == "approval":
            calls = pending_calls(child)
            waiting = [str(c.get("id")) for c in calls if "sub_agent" in c]
            check_decision(decision, [str(c.get("id")) for c in calls], waiting)
            check_child_decisions(child, decision)


def check_decision(value: Any, pending: Sequence[str], children: Collection[str] = ()) -> None:
    """Raise ``UserError`` unless ``value`` decides every pending call.

    The decision for a call in ``children`` (a sub-agent's, whose child waits) is handed on
    to the child as it is, and checked by the child.
    """
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
        if call_id not in children:
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
    if isinstance(decision, dict) and decision["action"] == "result":
        given = ToolResult(success=not decision.get("is_error"), output=decision["output"])
        return given.to_message(call)
    reason = decision.get("reason", "") if isinstance(decision, dict) else ""
    refusal = "the user rejected this call" + (f": {reason}" if reason else "")
    return ToolResult.fail(refusal).to_message(call)
