"""``/v1/chat/completions`` and ``/v1/models``: any OpenAI client can talk to a ponder agent.

The last message is the user's (a new run, the earlier messages its history) or ``tool``
results answering a suspended run's client-side calls (that run resumes). The answer is
the run's output; the agent's reasoning goes out as ``reasoning_content``. The request's
``tools`` are the client's: when the agent calls one, the response carries ``tool_calls``
with ``finish_reason: "tool_calls"`` and the run waits for the results. A run that waits
for approval answers 200 with a ``ponder`` object (run id, pending calls, approve URL).
A ``response_format`` of ``json_schema`` or ``json_object`` types the run's answer (see
``ponder.server.openai_format``): ``content`` is its validated JSON, sent whole at the end
of a stream; an answer that never validated is an error, like a failed run's.
Each request is a run in the registry, so the viewer shows it too; an ``Idempotency-Key``
header makes a retried request return the first one's run instead of starting another.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from ponder.messages import UserMessage
from ponder.server.held_answer import HeldAnswer
from ponder.server.idempotency import keys_of
from ponder.server.launcher import Launcher
from ponder.server.local_launcher import RunLauncher
from ponder.server.openai_format import output_spec_of
from ponder.server.openai_media import images_of
from ponder.server.openai_pieces import delta_for, reasoning_text
from ponder.server.openai_request import (
    RequestError,
    check_options,
    client_call_id,
    client_tools,
    ignored_header,
    include_usage,
    to_history,
    tool_results,
)
from ponder.server.runs import TERMINAL_KINDS, RunRecord
from ponder.server.schemas import ChatRequest, ErrorBody
from ponder.status import StopReason
from ponder.store.view import pending_calls

__all__ = ["MODEL_ID", "reasoning_text", "router"]

router = APIRouter(tags=["openai"])
MODEL_ID = "ponder"
_WAIT_SECONDS = 10.0
_NO_RETRY = {"x-should-retry": "false"}
_NO_TYPED_ANSWER: frozenset[StopReason] = frozenset(
    {"invalid_output", "reported", "content_filter"}
)
"""Stop reasons of a typed run that ended without a valid answer."""


def _usage(record: RunRecord) -> dict[str, int]:
    usage = record.usage
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _client_calls(record: RunRecord) -> list[dict[str, Any]] | None:
    """The calls a suspended run sends the client, when every pending call is the client's."""
    calls = pending_calls(record.suspension)
    if not calls or not all(c.get("external") for c in calls):
        return None
    return [
        {
            "id": client_call_id(record.run_id, str(c["id"])),
            "type": "function",
            "function": {"name": c["name"], "arguments": _arguments_text(c.get("arguments"))},
        }
        for c in calls
    ]


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _awaiting(request: Request, record: RunRecord) -> dict[str, Any]:
    """What the response says about a run that waits for approval."""
    base = str(request.base_url).rstrip("/")
    return {
        "run_id": record.run_id,
        "status": "suspended",
        "pending_calls": pending_calls(record.suspension),
        "approve_url": f"{base}/v1/runs/{record.run_id}/resume",
    }


def _approval_text(record: RunRecord) -> str:
    names = ", ".join(str(c.get("name")) for c in pending_calls(record.suspension))
    return (
        f"Run {record.run_id} waits for approval of {names or 'its pending calls'}: "
        f'POST /v1/runs/{record.run_id}/resume with {{"decision": "approve"}} or "reject".'
    )


def _message(request: Request, record: RunRecord, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of a finished or suspended run, and its finish reason."""
    message: dict[str, Any] = {"role": "assistant", "content": record.output or "", "refusal": None}
    reasoning = "".join(reasoning_text(e) for e in events)
    if reasoning:
        message["reasoning_content"] = reasoning
    if record.status == "suspended":
        calls = _client_calls(record)
        if calls is not None:
            return {**message, "content": None, "tool_calls": calls}
        message["content"] = _approval_text(record)
        message["ponder"] = _awaiting(request, record)
    return message


def _finish_reason(record: RunRecord) -> str:
    return "tool_calls" if _client_calls(record) is not None else "stop"


def _completion(
    request: Request, body: ChatRequest, record: RunRecord, first_seq: int
) -> dict[str, Any]:
    events = [e for e in record.events if int(e["seq"]) > first_seq]
    choice = {
        "index": 0,
        "message": _message(request, record, events),
        "finish_reason": _finish_reason(record),
        "logprobs": None,
    }
    completion = {
        "id": f"chatcmpl-{record.run_id}",
        "object": "chat.completion",
        "created": int(record.created),
        "model": body.model,
        "choices": [choice],
        "usage": _usage(record),
    }
    if record.status == "suspended" and _client_calls(record) is None:
        completion["ponder"] = _awaiting(request, record)
    return completion


def _chunk_of(body: ChatRequest, record: RunRecord, choices: list[Any]) -> dict[str, Any]:
    chunk = {
        "id": f"chatcmpl-{record.run_id}",
        "object": "chat.completion.chunk",
        "created": int(record.created),
        "model": body.model,
        "choices": choices,
    }
    # with include_usage, only the last chunk (with no choices) carries the usage
    return chunk | {"usage": None} if include_usage(body) else chunk


def _chunk(body: ChatRequest, record: RunRecord, delta: dict[str, Any], finish: str | None) -> str:
    chunk = _chunk_of(body, record, [{"index": 0, "delta": delta, "finish_reason": finish}])
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"


def _is_pause(event: dict[str, Any]) -> bool:
    """True for the event after which this request's stream has nothing more to send."""
    return event["kind"] in TERMINAL_KINDS or event["kind"] == "run_suspended"


async def _stream(
    request: Request, body: ChatRequest, record: RunRecord, launcher: Launcher, seq: int
) -> AsyncIterator[str]:
    """The run's chunks: reasoning as it happens, the answer once the run accepted it.

    The answer's text is held (`HeldAnswer`) until the run finishes: a client cannot take
    back text the run withdraws. A typed answer goes out whole, at the end.
    """
    registry, ended, answered, held = launcher.registry, False, False, HeldAnswer()
    try:
        yield _chunk(body, record, {"role": "assistant", "content": ""}, None)
        while not ended:
            for event in registry.events_after(record.run_id, seq):
                seq, ended = int(event["seq"]), ended or _is_pause(event)
                for shown in held.feed(event):
                    delta = delta_for(shown)
                    if delta is not None and not (record.is_typed and "content" in delta):
                        answered = answered or "content" in delta
                        yield _chunk(body, record, delta, None)
            if not ended and not record.is_done:
                await registry.wait(record.run_id, seq, _WAIT_SECONDS)
            ended = ended or (record.is_done and not registry.events_after(record.run_id, seq))
        await launcher.wait(record.run_id)
        failure = _failure(record)
        if failure is None and record.status == "completed" and record.output and not answered:
            yield _chunk(body, record, {"content": record.output}, None)  # typed, or resumed
        yield _final(request, body, record, failure)
    finally:
        launcher.cancel(record.run_id)


def _failure(record: RunRecord) -> dict[str, Any] | None:
    """The error (OpenAI's ``error`` object) of a run that failed or has no valid typed answer."""
    if record.status not in ("completed", "suspended"):
        message = f"the agent run failed: {record.error or record.status}"
        return {"message": message, "type": "server_error", "param": None, "code": "run_failed"}
    if not record.is_typed or record.status != "completed":
        return None
    if record.stop_reason not in _NO_TYPED_ANSWER:
        return None
    problems = [str(e.get("problem")) for e in record.events if e.get("kind") == "output_rejected"]
    why = problems[-1] if problems else f"the run stopped ({record.stop_reason}) before one"
    return {
        "message": f"the agent gave no answer that matches response_format: {why}",
        "type": "server_error",
        "param": "response_format",
        "code": "invalid_output",
    }


def _final(
    request: Request, body: ChatRequest, record: RunRecord, failure: dict[str, Any] | None
) -> str:
    if failure is not None:
        return f"data: {json.dumps({'error': failure}, ensure_ascii=False)}\n\ndata: [DONE]\n\n"
    text = ""
    calls = _client_calls(record) if record.status == "suspended" else None
    if calls is not None:
        deltas = [{**call, "index": i} for i, call in enumerate(calls)]
        text += _chunk(body, record, {"tool_calls": deltas}, None)
    elif record.status == "suspended":
        text += _chunk(body, record, {"content": _approval_text(record)}, None)
    text += _chunk(body, record, {}, _finish_reason(record))
    if include_usage(body):
        usage_chunk = {**_chunk_of(body, record, []), "usage": _usage(record)}
        text += f"data: {json.dumps(usage_chunk)}\n\n"
    return text + "data: [DONE]\n\n"


def _resumed_at(record: RunRecord) -> int:
    """The seq before the run's last resume (0 if it never resumed)."""
    resumed = [int(e["seq"]) for e in record.events if e.get("kind") == "run_resumed"]
    return resumed[-1] - 1 if resumed else 0


async def _begin(launcher: Launcher, body: ChatRequest) -> tuple[RunRecord, int]:
    """Start the run the request asks for, or resume the one its tool results answer."""
    check_options(body)
    output = output_spec_of(body)  # checked on every request; a resumed run keeps its own
    results = tool_results(body)
    if results is not None:
        record = await launcher.lookup(results.run_id)
        if record is not None and record.status == "completed":
            return record, _resumed_at(record)  # answered already: the same answer again
        if record is None or record.status != "suspended":
            raise RequestError(
                f"the tool results answer run {results.run_id}, which does not wait for them "
                f"({'unknown' if record is None else record.status})",
                "messages",
            )
        seq = record.last_seq
        await launcher.resume(record, results.decision)
        return record, seq
    *earlier, last = body.messages
    if last.role != "user":
        raise RequestError(
            "the last message must have role 'user' (or be tool results)", "messages"
        )
    prompt = body.text_of(last)
    if not prompt.strip():
        raise RequestError("the last user message has no text", "messages")
    images = images_of(last, len(earlier))
    tools = client_tools(body)
    history = to_history(body, earlier)
    if isinstance(launcher, RunLauncher):
        record = launcher.start(
            prompt, history, external_tools=tools, resumable=True, output=output, images=images
        )
        return record, 0
    if images or any(isinstance(m, UserMessage) and m.attachments for m in history):
        raise RequestError("images need runs started by this server", "messages")
    if tools:  # a run on Temporal cannot hand its calls back to this client
        raise RequestError("client-side tools need runs started by this server", "tools")
    if output is not None:
        raise RequestError(
            "a structured response_format needs runs started by this server: runs on "
            "Temporal answer in text (give {'type': 'text'} or leave it out)",
            "response_format",
        )
    return launcher.start(prompt, history), 0


@router.post(
    "/v1/chat/completions",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "A completion or a stream."},
        400: {"model": ErrorBody},
        401: {"model": ErrorBody},
        413: {"model": ErrorBody},
        502: {"model": ErrorBody},
    },
)
async def chat_completions(
    body: ChatRequest,
    request: Request,
    idempotency_key: Annotated[str | None, Header(max_length=256)] = None,
) -> Any:
    """An OpenAI chat completion answered by the agent (``stream: true`` for SSE chunks)."""
    launcher: Launcher = request.app.state.launcher
    keys = keys_of(request)
    known = keys.get(idempotency_key)
    record = launcher.registry.get(known[0]) if known is not None else None
    if known is not None and record is not None:
        seq = known[1]
    else:
        record, seq = await _begin(launcher, body)
        keys.put(idempotency_key, record.run_id, seq)
    headers = ignored_header(body)
    if body.stream:
        stream = _stream(request, body, record, launcher, seq)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)
    await launcher.wait(record.run_id)
    failure = _failure(record)
    if failure is not None:
        return JSONResponse({"error": failure}, status_code=502, headers=_NO_RETRY | headers)
    return JSONResponse(_completion(request, body, record, seq), headers=headers)


def _model_entry() -> dict[str, Any]:
    return {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "ponder"}


@router.get("/v1/models")
async def list_models() -> dict[str, Any]:
    """The served agent, as the one model; any ``model`` name in a request reaches it."""
    return {"object": "list", "data": [_model_entry()]}


@router.get("/v1/models/{model_id}")
async def get_model(model_id: str) -> dict[str, Any]:
    """The served agent under any name a client uses for it."""
    return {**_model_entry(), "id": model_id}
