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
from typing import Any, assert_never

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse

from ponder.events import kind_of
from ponder.messages import AssistantMessage, Message, SystemMessage, TextPart, UserMessage
from ponder.server.launchers import Launcher
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
    found = _piece(event)
    return found[1] if found is not None and found[0] == "reasoning_content" else ""


def _piece(event: dict[str, Any]) -> tuple[str, str] | None:
    """Where an event goes in the answer (``content`` or ``reasoning_content``), and what."""
    match kind := kind_of(event):
        case "text_delta":
            return "content", str(event.get("text", ""))
        case "reasoning":
            return "reasoning_content", f"[round {event.get('round')}] {event.get('summary', '')}\n"
        case "thinking":
            data = event.get("data") or {}
            label = f"Thought {data.get('thought_number')}/{data.get('total_thoughts')}"
            return "reasoning_content", f"{label}: {data.get('thought', '')}\n"
        case "reasoning_delta":
            return "reasoning_content", str(event.get("text", ""))
        case (
            "run_started" | "run_finished" | "run_failed" | "run_cancelled" | "run_suspended"
            | "run_resumed" | "round_started" | "usage" | "structured_reasoning"
            | "tool_prediction" | "tool_call_started" | "tool_call_finished" | "tool_call_failed"
            | "middle_message" | "reflection" | "limit_reached" | "loop_detected"
            | "stall_detected" | "todo" | "plan_updated" | "step_started" | "step_finished"
            | "compaction" | "retrieval" | "report_raised" | "checkpoint_written"
            | "model_degraded" | "model_unanswered" | "plan_replanned" | "mcp_event"
        ):  # fmt: skip
            return None
        case _:
            assert_never(kind)


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
    found = _piece(event)
    if found is None or (found[0] == "reasoning_content" and not found[1]):
        return None
    return {found[0]: found[1]}


async def _stream(body: ChatRequest, record: RunRecord, launcher: Launcher) -> AsyncIterator[str]:
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
    launcher: Launcher = request.app.state.launcher
    record = launcher.start(prompt, history)
    if body.stream:
        return StreamingResponse(_stream(body, record, launcher), media_type="text/event-stream")
    await launcher.wait(record.run_id)
    if record.status != "completed":
        raise _error_of(record)
    return _completion(body, record)
