"""Answer a server's ``elicitation/create`` by asking the user, schema checked.

The run's `ElicitationHandler` (a Python callback, or the CLI's prompt) receives an
`ElicitationRequest` — form mode with a JSON schema, or URL mode with a link to open —
and returns an `ElicitationAnswer`. An accepted form answer is validated against the
requested schema (after the schema's defaults fill the fields it left out); one that
does not match is an error answer to that server's request
(the tool call that asked fails with it), never a crashed run. Each request is an ``mcp``
event of type ``elicitation`` whose ``status`` is the action or ``invalid``/``refused``
(``held`` when the run suspends on it); the answer's content is not put in events.

A run with no handler holds the question instead (`RunBinding.hold`): the server is told
``cancel``, the tool call's result is dropped, and the run suspends on the question (see
``ponder.agent.run.elicitation``). The resumed run makes the call again and gives the
stored answer when the server asks the same question during it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ponder.events import McpEvent
from ponder.mcp.binding import RunBinding

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "GivenAnswer",
    "InputHold",
    "answer_elicitation",
    "check_answer",
    "same_question",
    "schema_problems",
    "with_defaults",
]

Action = Literal["accept", "decline", "cancel"]
_MAX_PROBLEMS = 5
_NO_CALL = "no tool call of a run is in flight on this session"


@dataclass(frozen=True)
class ElicitationRequest:
    """What a server asks the user: fill in ``schema`` (form) or visit ``url`` (URL mode)."""

    server: str
    run_id: str
    mode: Literal["form", "url"]
    message: str
    schema: dict[str, Any] = field(default_factory=dict)
    url: str | None = None
    elicitation_id: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    """ponder's id for this request (in its events; the REST API answers by it)."""


@dataclass(frozen=True)
class ElicitationAnswer:
    """The user's reply: ``accept`` with ``content`` (form), or ``decline``/``cancel``."""

    action: Action
    content: dict[str, Any] | None = None


@dataclass(frozen=True)
class GivenAnswer:
    """The user's answer to one held question, for the call that asked it."""

    question: ElicitationRequest
    answer: ElicitationAnswer


@dataclass
class InputHold:
    """One run's held questions and the answers it was resumed with, by call id."""

    held: dict[str, ElicitationRequest] = field(default_factory=dict)
    answers: dict[str, GivenAnswer] = field(default_factory=dict)


def schema_problems(schema: dict[str, Any], content: dict[str, Any] | None) -> list[str]:
    """Why ``content`` does not satisfy ``schema`` (empty when it does)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        validator = Draft202012Validator(schema)
    except SchemaError as exc:
        return [f"the requested schema is invalid: {exc.message}"]
    errors = sorted(validator.iter_errors(content or {}), key=lambda e: list(e.path))
    return [
        f"{'/'.join(str(p) for p in e.path) or '(answer)'}: {e.message}"
        for e in errors[:_MAX_PROBLEMS]
    ]


def with_defaults(schema: dict[str, Any], content: dict[str, Any] | None) -> dict[str, Any]:
    """``content`` with the schema's ``default`` for every field the answer left out."""
    filled = dict(content or {})
    for key, spec in dict(schema.get("properties") or {}).items():
        if key not in filled and isinstance(spec, dict) and "default" in spec:
            filled[key] = spec["default"]
    return filled


def check_answer(
    mode: str, schema: dict[str, Any], answer: ElicitationAnswer
) -> tuple[ElicitationAnswer, list[str]]:
    """The answer as the server gets it (defaults filled in), and why it is not valid."""
    if answer.action not in ("accept", "decline", "cancel"):
        return answer, [f"unknown action {answer.action!r} (accept, decline or cancel)"]
    if answer.action != "accept" or mode != "form":
        return ElicitationAnswer(answer.action), []
    if answer.content is not None and not isinstance(answer.content, dict):
        return answer, [f"content must be an object, got {type(answer.content).__name__}"]
    filled = ElicitationAnswer("accept", with_defaults(schema, answer.content))
    return filled, schema_problems(schema, filled.content)


def _to_request(server: str, run_id: str, params: types.ElicitRequestParams) -> ElicitationRequest:
    import mcp_types as types

    if isinstance(params, types.ElicitRequestURLParams):
        return ElicitationRequest(
            server,
            run_id,
            "url",
            params.message,
            url=params.url,
            elicitation_id=params.elicitation_id,
        )
    return ElicitationRequest(server, run_id, "form", params.message, dict(params.requested_schema))


async def answer_elicitation(
    binding: RunBinding | None,
    server: str,
    params: types.ElicitRequestParams,
    emit: Callable[[str, McpEvent], None],
) -> types.ElicitResult | types.ErrorData:
    """Ask the run's handler; the validated answer, or an error the server receives."""
    import mcp_types as types

    mode = "url" if isinstance(params, types.ElicitRequestURLParams) else "form"
    if binding is not None and binding.elicit is None and binding.hold is not None:
        return _held(binding, server, _to_request(server, binding.run_id, params), emit)
    if binding is None or binding.elicit is None:
        reason = _NO_CALL if binding is None else "no one can answer in this run"
        emit(server, _event(server, mode, "refused", params.message, error=reason))
        return types.ErrorData(code=types.INVALID_REQUEST, message=f"elicitation refused: {reason}")
    request = _to_request(server, binding.run_id, params)
    emit(server, _event(server, mode, "requested", params.message, id=request.id))
    try:
        answer = await binding.elicit(request)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        emit(server, _event(server, mode, "failed", params.message, error=error))
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"elicitation failed: {error}")
    return _checked(server, request, answer, emit)


def _held(
    binding: RunBinding,
    server: str,
    request: ElicitationRequest,
    emit: Callable[[str, McpEvent], None],
) -> types.ElicitResult | types.ErrorData:
    """The stored answer to this question, or ``cancel`` with the question held for the run."""
    import mcp_types as types

    hold = binding.hold
    assert hold is not None
    call_id = binding.current_call(server)
    if call_id is None:
        reason = "no tool call of this run is in flight on the server"
        emit(server, _event(server, request.mode, "refused", request.message, error=reason))
        return types.ErrorData(code=types.INVALID_REQUEST, message=f"elicitation refused: {reason}")
    given = hold.answers.pop(call_id, None)
    if given is not None and same_question(given.question, request):
        replayed = ElicitationRequest(
            server,
            binding.run_id,
            request.mode,
            request.message,
            request.schema,
            request.url,
            request.elicitation_id,
            id=given.question.id,
        )
        return _checked(server, replayed, given.answer, emit)
    hold.held[call_id] = request
    emit(server, _event(server, request.mode, "held", request.message, id=request.id))
    return types.ElicitResult(action="cancel")


def same_question(asked: ElicitationRequest, again: ElicitationRequest) -> bool:
    """True when ``again`` asks what ``asked`` did (a re-made call asking once more)."""
    return (asked.server, asked.mode, asked.message, asked.schema, asked.url) == (
        again.server,
        again.mode,
        again.message,
        again.schema,
        again.url,
    )


def _checked(
    server: str,
    request: ElicitationRequest,
    answer: ElicitationAnswer,
    emit: Callable[[str, McpEvent], None],
) -> types.ElicitResult | types.ErrorData:
    import mcp_types as types

    answer, problems = check_answer(request.mode, request.schema, answer)
    if problems:
        error = "the answer does not match the requested schema: " + "; ".join(problems)
        emit(server, _event(server, request.mode, "invalid", request.message, error=error))
        return types.ErrorData(code=types.INVALID_PARAMS, message=error)
    emit(server, _event(server, request.mode, answer.action, request.message, id=request.id))
    content = answer.content if answer.action == "accept" and request.mode == "form" else None
    return types.ElicitResult(action=answer.action, content=content)


def _event(server: str, mode: str, status: str, message: str, **data: Any) -> McpEvent:
    details = {"status": status, "mode": mode, "message": message, **data}
    return McpEvent(type="elicitation", server=server, data=details)
