"""``POST /v1/chat/completions``: any OpenAI client can talk to a ponder agent.

The last message must be the user's; the earlier ones become the run's history. The
answer is the run's output; the agent's reasoning — ``think_and_reason`` summaries,
sequential thoughts, provider reasoning — goes out as ``reasoning_content``. Each request
is a run in the registry, so the viewer shows it too.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse

from ponder.messages import AssistantMessage, Message, SystemMessage, TextPart, UserMessage
from ponder.server.launcher import RunLauncher
from ponder.server.runs import TERMINAL_KINDS, RunRecord
from ponder.server.schemas import ChatRequest, ErrorBody

__all__ = ["reasoning_text", "router"]

router = APIRouter(tags=["openai"])
_WAIT_SECONDS = 10.0


def _history(body: ChatRequest) -> tuple[list[Message], str]:
    *earlier, last = body.messages
    if last.role != "user":
        raise HTTPException(400, "the last message must have role 'user'")
    prompt = body.text_of(last)
    if not prompt.strip():
        raise HTTPException(400, "the last user message has no text")
    history: list[Message] = []
    for message in earlier:
        text = body.text_of(message)
        if message.role in ("system", "developer"):
            history.append(SystemMessage(content=text))
        elif message.role == "user":
            history.append(UserMessage(content=text))
        elif message.role == "assistant" and text:
            history.append(AssistantMessage(parts=(TextPart(text=text),)))
    return history, prompt


def reasoning_text(event: dict[str, Any]) -> str:
    """The part of an event that belongs in ``reasoning_content`` ("" for none)."""
    kind = event.get("kind")
    if kind == "reasoning":
        return f"[round {event.get('round')}] {event.get('summary', '')}\n"
    if kind == "thinking":
        data = event.get("data") or {}
        label = f"Thought {data.get('thought_number')}/{data.get('total_thoughts')}"
        return f"{label}: {data.get('thought', '')}\n"
    if kind == "reasoning_delta":
        return str(event.get("text", ""))
    return ""


def _usage(record: RunRecord) -> dict[str, int]:
    usage = record.usage
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _error_of(record: RunRecord) -> HTTPException:
    return HTTPException(502, f"the agent run failed: {record.error or record.status}")


def _completion(body: ChatRequest, record: RunRecord) -> dict[str, Any]:
    reasoning = "".join(reasoning_text(e) for e in record.events)
    message: dict[str, Any] = {"role": "assistant", "content": record.output or ""}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": f"chatcmpl-{record.run_id}",
        "object": "chat.completion",
        "created": int(record.created),
        "model": body.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": _usage(record),
    }


def _chunk(body: ChatRequest, record: RunRecord, delta: dict[str, Any], finish: str | None) -> str:
    chunk = {
        "id": f"chatcmpl-{record.run_id}",
        "object": "chat.completion.chunk",
        "created": int(record.created),
        "model": body.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"


def _delta_for(event: dict[str, Any]) -> dict[str, Any] | None:
    if event.get("kind") == "text_delta":
        return {"content": str(event.get("text", ""))}
    reasoning = reasoning_text(event)
    return {"reasoning_content": reasoning} if reasoning else None


async def _stream(
    body: ChatRequest, record: RunRecord, launcher: RunLauncher
) -> AsyncIterator[str]:
    registry, seq, ended = launcher.registry, 0, False
    try:
        yield _chunk(body, record, {"role": "assistant", "content": ""}, None)
        while not ended:
            for event in registry.events_after(record.run_id, seq):
                seq, ended = int(event["seq"]), event["kind"] in TERMINAL_KINDS
                delta = _delta_for(event)
                if delta is not None:
                    yield _chunk(body, record, delta, None)
            if not ended and not record.is_done:
                await registry.wait(record.run_id, seq, _WAIT_SECONDS)
            ended = ended or (record.is_done and not registry.events_after(record.run_id, seq))
        await launcher.wait(record.run_id)
        yield _final(body, record)
    finally:
        launcher.cancel(record.run_id)


def _final(body: ChatRequest, record: RunRecord) -> str:
    if record.status != "completed":
        detail = {"message": f"the agent run failed: {record.error}", "type": "run_failed"}
        return f"data: {json.dumps({'error': detail})}\n\ndata: [DONE]\n\n"
    text = _chunk(body, record, {}, "stop")
    if body.stream_options is not None and body.stream_options.include_usage:
        usage_chunk = {
            "id": f"chatcmpl-{record.run_id}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.model,
            "choices": [],
            "usage": _usage(record),
        }
        text += f"data: {json.dumps(usage_chunk)}\n\n"
    return text + "data: [DONE]\n\n"


@router.post(
    "/v1/chat/completions",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "A completion or a stream."},
        400: {"model": ErrorBody},
        401: {"model": ErrorBody},
        413: {"model": ErrorBody},
        422: {"model": ErrorBody},
        502: {"model": ErrorBody},
    },
)
async def chat_completions(body: ChatRequest, request: Request) -> Any:
    """An OpenAI chat completion answered by the agent (``stream: true`` for SSE chunks)."""
    history, prompt = _history(body)
    launcher = request.app.state.launcher
    assert isinstance(launcher, RunLauncher)
    record = launcher.start(prompt, history)
    if body.stream:
        return StreamingResponse(_stream(body, record, launcher), media_type="text/event-stream")
    await launcher.wait(record.run_id)
    if record.status != "completed":
        raise _error_of(record)
    return _completion(body, record)
