"""Suspending a run on an MCP server's question (elicitation), and answering it on resume.

A server asks for input inside a live ``tools/call``. When the run has no one to answer
live (no `Agent.on_elicitation` handler), the question is held (`InputHold`): the server
is told ``cancel``, the call's result is dropped, and once the batch's other calls are
done the run suspends with reason ``elicitation`` and the questions as payload (their
ids, server, call, mode, message, and the requested schema or URL), kept in
``RunState.awaiting_input``. The batch's other answers are saved, as for an approval.

The run is resumed with the answers (`accept_answers` checks them against each question's
schema: an invalid answer is a `UserError` and the run stays suspended on its questions).
The MCP request the question came in is gone by then — it may be in another process —
so the call is made again, and when the server asks the same question during it (same
server, mode, message and schema or URL), the stored answer is given. A server that asks
something else suspends the run again on the new question. The server's tool therefore
runs twice: a tool that changed something before asking does so twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, NoReturn

from ponder.exceptions import Suspend, UserError
from ponder.messages import ToolCallPart, ToolMessage

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext
    from ponder.mcp.elicitation import ElicitationRequest, GivenAnswer

__all__ = [
    "accept_answers",
    "check_answers",
    "hold_for_input",
    "input_payload",
    "question_of",
]


def input_payload(questions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The suspension payload: the questions that wait for an answer."""
    return {"elicitations": [dict(q) for q in questions]}


def _as_dict(call: ToolCallPart, request: ElicitationRequest) -> dict[str, Any]:
    return {**asdict(request), "call_id": call.id, "tool": call.name}


def question_of(raw: dict[str, Any]) -> ElicitationRequest:
    """The request a stored question describes."""
    # MCP's modules load only for runs that have MCP servers (see CONTRIBUTING, "Imports")
    from ponder.mcp.elicitation import ElicitationRequest

    return ElicitationRequest(
        server=str(raw.get("server", "")),
        run_id=str(raw.get("run_id", "")),
        mode="url" if raw.get("mode") == "url" else "form",
        message=str(raw.get("message", "")),
        schema=dict(raw.get("schema") or {}),
        url=raw.get("url"),
        elicitation_id=raw.get("elicitation_id"),
        id=str(raw.get("id", "")),
    )


async def hold_for_input(
    ctx: RunContext,
    calls: Sequence[ToolCallPart],
    answers: dict[str, ToolMessage],
    waiting_approval: Sequence[ToolCallPart],
) -> NoReturn:
    """Suspend the run on the questions ``calls`` asked, saving the batch's ``answers``."""
    hold = ctx.inputs
    assert hold is not None  # only held questions get here
    checkpointer = ctx.checkpointer
    if checkpointer is not None:
        for call_id, answer in answers.items():
            if checkpointer.saved(call_id) is None:
                await checkpointer.save(answer)
    questions = [_as_dict(c, hold.held.pop(c.id)) for c in calls]
    ctx.state.awaiting_input = tuple(questions)
    ctx.state.awaiting_approval = tuple(c.id for c in waiting_approval)
    raise Suspend("elicitation", input_payload(questions))


def accept_answers(ctx: RunContext, value: Any) -> None:
    """Check the answers a run waiting for input was resumed with, and keep them.

    ``value`` maps question ids to ``{"action": ..., "content": {...}}``; with one
    question it may be that answer itself, and ``"decline"`` or ``"cancel"`` answers
    every question. A question left unanswered is asked again when its call is re-made.
    """
    hold = ctx.inputs
    if hold is None:
        _by_question(value, [str(q.get("id")) for q in ctx.state.awaiting_input])
        raise UserError(
            "this run waits for answers to MCP elicitation, but its agent has an "
            "elicitation handler or no MCP servers: resume it with the agent it ran with"
        )
    for question, given in check_answers(ctx.state.awaiting_input, value):
        hold.answers[str(question["call_id"])] = given


def check_answers(
    questions: Sequence[dict[str, Any]], value: Any
) -> list[tuple[dict[str, Any], GivenAnswer]]:
    """The answers ``value`` gives ``questions``, each with its question, checked.

    A `UserError` names the first answer that does not fit (see `accept_answers`).
    """
    from ponder.mcp.elicitation import ElicitationAnswer, GivenAnswer, check_answer

    by_id = {str(q.get("id")): q for q in questions}
    checked: list[tuple[dict[str, Any], GivenAnswer]] = []
    for question_id, raw in _by_question(value, list(by_id)).items():
        question = by_id[question_id]
        request = question_of(question)
        answer = ElicitationAnswer(raw["action"], raw.get("content"))
        answer, problems = check_answer(request.mode, request.schema, answer)
        if problems:
            raise UserError(
                f"the answer to question {question_id} of MCP server {request.server!r} "
                f"({request.message!r}) does not match its schema: " + "; ".join(problems)
            )
        checked.append((question, GivenAnswer(request, answer)))
    return checked


def _by_question(value: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    if value in ("decline", "cancel"):
        return {i: {"action": value} for i in ids}
    if isinstance(value, dict) and "action" in value and len(ids) == 1:
        value = {ids[0]: value}
    if not isinstance(value, dict) or not value:
        raise UserError(
            'resume a run waiting for input with {"action": "accept", "content": {...}} '
            f"(one question) or a mapping from question id to such an answer; got {value!r}"
        )
    unknown = [k for k in value if k not in ids]
    if unknown:
        raise UserError(f"no question {unknown[0]!r} waits in this run (waiting: {ids})")
    for key, answer in value.items():
        if not isinstance(answer, dict) or answer.get("action") not in (
            "accept",
            "decline",
            "cancel",
        ):
            raise UserError(
                f"the answer to question {key!r} must be an object with action accept, "
                f"decline or cancel; got {answer!r}"
            )
    return dict(value)
