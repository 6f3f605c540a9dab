"""MCP elicitation on Temporal: a server's question suspends the run, as it does locally.

The worker's tool call runs with the question held (`InputHold`): the server is told
``cancel``, the call's result is dropped, and the question comes back in the activity's
result. The workflow keeps it in the run's `InputHold`, so the run's program suspends
with reason ``elicitation`` exactly as a local run does. The answer arrives as the
``decide`` Update (or the ``decide_later`` Signal) — from ``ponder runs resume --answer``,
HTTP or `TemporalAgent.decide` — is checked against the question's schema, and the call
is made again with the answer given to the server when it asks the same question.
"""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace
from typing import Any

from ponder.agent.run.elicitation import accept_answers, question_of
from ponder.mcp.elicitation import ElicitationAnswer, GivenAnswer, InputHold

__all__ = ["answer_data", "check_answers", "held_data", "hold_from_data", "note_held"]


def answer_data(hold: InputHold | None, call_id: str) -> dict[str, Any] | None:
    """The answer the run was resumed with for this call, as activity input (taken once)."""
    given = None if hold is None else hold.answers.pop(call_id, None)
    if given is None:
        return None
    return {
        "question": asdict(given.question),
        "answer": {"action": given.answer.action, "content": given.answer.content},
    }


def hold_from_data(call_id: str, data: dict[str, Any] | None) -> InputHold:
    """The worker's hold for one call: empty, or with the answer the run was given."""
    hold = InputHold()
    if data is not None:
        answer = data["answer"]
        hold.answers[call_id] = GivenAnswer(
            question_of(data["question"]),
            ElicitationAnswer(answer["action"], answer.get("content")),
        )
    return hold


def held_data(hold: InputHold, call_id: str) -> dict[str, Any] | None:
    """The question this call's server asked and that waits for an answer, if any."""
    request = hold.held.get(call_id)
    return None if request is None else asdict(request)


def note_held(hold: InputHold | None, call_id: str, data: Any) -> None:
    """Keep the question a worker's call came back with, for the run to suspend on."""
    if hold is not None and isinstance(data, dict):
        hold.held[call_id] = question_of(data)


def check_answers(payload: Any, value: Any) -> None:
    """Raise ``UserError`` unless ``value`` answers an elicitation suspension's questions.

    ``payload`` is the suspension's; nothing is changed.
    """
    questions = tuple(payload.get("elicitations") or ()) if isinstance(payload, dict) else ()
    state = SimpleNamespace(awaiting_input=questions)
    accept_answers(SimpleNamespace(state=state, inputs=InputHold()), value)  # type: ignore[arg-type]
