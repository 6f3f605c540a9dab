"""``/v1/runs``: start, read, follow over SSE (resumable), cancel, resume after approval.

Resuming works for any run in the server's store, also one another process started.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from ponder.exceptions import UserError
from ponder.messages import AssistantMessage, Message, SystemMessage, TextPart, UserMessage
from ponder.server.accepted import start_accepted, start_over
from ponder.server.launcher import Launcher
from ponder.server.local_launcher import RunLauncher
from ponder.server.runs import TERMINAL_KINDS, RunRecord, Turn
from ponder.server.schemas import (
    ErrorBody,
    HistoryMessage,
    ResumeRequest,
    RunList,
    RunRequest,
    RunSummary,
)

__all__ = ["router", "to_messages"]

router = APIRouter(prefix="/v1/runs", tags=["runs"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody},
    401: {"model": ErrorBody},
    404: {"model": ErrorBody},
    409: {"model": ErrorBody},
    413: {"model": ErrorBody},
    422: {"model": ErrorBody},
}
_WAIT_SECONDS = 10.0


def to_messages(history: list[HistoryMessage]) -> list[Message]:
    """Ledger messages for a request's history."""
    messages: list[Message] = []
    for item in history:
        if item.role == "system":
            messages.append(SystemMessage(content=item.content))
        elif item.role == "user":
            messages.append(UserMessage(content=item.content))
        else:
            messages.append(AssistantMessage(parts=(TextPart(text=item.content),)))
    return messages


def _launcher(request: Request) -> Launcher:
    launcher: Launcher = request.app.state.launcher
    return launcher


async def _record(request: Request, run_id: str) -> RunRecord:
    record = await _launcher(request).lookup(run_id)
    if record is None:
        raise HTTPException(404, f"no run with id {run_id!r}")
    return record


@router.post("", status_code=201, response_model=RunSummary, responses=_ERRORS)
async def start_run(body: RunRequest, request: Request) -> dict[str, Any]:
    """Start a run in the background; follow it at ``/v1/runs/{id}/events``.

    With a store the answer comes once the run is stored: a server stopped or killed right
    after it still knows the run, and resumes (or starts over) it when it starts again.
    """
    launcher = _launcher(request)
    history = to_messages(body.history)
    if isinstance(launcher, RunLauncher):
        turn = Turn(body.session_id, body.limits)
        return (await start_accepted(launcher, body.prompt, history, turn)).summary()
    if body.session_id is not None or body.limits is not None:
        raise UserError(
            "this server's runs (on Temporal) take neither session_id nor limits through "
            "the runs API: send the conversation as history"
        )
    return launcher.start(body.prompt, history).summary()


@router.get("", response_model=RunList, responses=_ERRORS)
async def list_runs(
    request: Request, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> dict[str, Any]:
    """The newest runs first: this server's, and the store's when it has one."""
    launcher = _launcher(request)
    runs = launcher.registry.list_runs(limit) + await launcher.stored_records(limit)
    runs.sort(key=lambda r: r.created, reverse=True)
    return {"runs": [r.summary() for r in runs[:limit]]}


@router.get("/{run_id}", response_model=RunSummary, responses=_ERRORS)
async def get_run(run_id: str, request: Request) -> dict[str, Any]:
    """A run's status and outcome."""
    return (await _record(request, run_id)).summary()


@router.post("/{run_id}/cancel", response_model=RunSummary, responses=_ERRORS)
async def cancel_run(run_id: str, request: Request) -> dict[str, Any]:
    """Stop a running or suspended run; a run that already ended is returned as it is."""
    record = await _record(request, run_id)
    launcher = _launcher(request)
    if launcher.cancel(run_id):
        await launcher.wait(run_id)
    elif record.status == "suspended":
        await launcher.cancel_suspended(record)
    return record.summary()


@router.post("/{run_id}/resume", response_model=RunSummary, responses=_ERRORS)
async def resume_run(run_id: str, body: ResumeRequest, request: Request) -> dict[str, Any]:
    """Continue a suspended run with a decision; follow it on ``/v1/runs/{id}/events``.

    400 for a decision that does not fit the pending calls or a cancelled run, 409 when
    the run is running (here or in another process) or already completed. A run this
    server accepted that stopped before its first checkpoint starts over from its request.
    """
    record = await _record(request, run_id)
    launcher = _launcher(request)
    if isinstance(launcher, RunLauncher):
        started = await start_over(launcher, record.run_id)
        if started is not None:
            return started.summary()
    await launcher.resume(record, body.decision)
    return record.summary()


def _resume_point(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return after or 0
    try:
        value = int(last_event_id.strip())
    except ValueError:
        raise HTTPException(400, "Last-Event-ID must be an event number") from None
    if value < 0:
        raise HTTPException(400, "Last-Event-ID must not be negative")
    return value


async def _follow(request: Request, record: RunRecord, seq: int) -> AsyncIterator[ServerSentEvent]:
    registry = _launcher(request).registry
    while True:
        for event in registry.events_after(record.run_id, seq):
            seq = int(event["seq"])
            yield ServerSentEvent(data=json.dumps(event), event=str(event["kind"]), id=str(seq))
            if event["kind"] in TERMINAL_KINDS and record.is_done:
                return
        if record.is_done and not registry.events_after(record.run_id, seq):
            return
        if await request.is_disconnected():
            return
        await registry.wait(record.run_id, seq, _WAIT_SECONDS)


@router.get(
    "/{run_id}/events",
    responses={
        **_ERRORS,
        200: {"content": {"text/event-stream": {}}, "description": "The run's events (SSE)."},
        204: {"description": "The run has ended and no events follow the given one."},
    },
)
async def run_events(
    run_id: str,
    request: Request,
    last_event_id: Annotated[str | None, Header(max_length=32)] = None,
    after: Annotated[int | None, Query(ge=0, description="Replay events after this seq.")] = None,
) -> Response:
    """The run's events as server-sent events; ``Last-Event-ID`` resumes without loss.

    A stored run is replayed from the store's event log. Once a run has ended, a request
    for the events after its last one gets 204, which tells ``EventSource`` to stop
    reconnecting.
    """
    record = await _record(request, run_id)
    seq = _resume_point(last_event_id, after)
    if record.is_done and not _launcher(request).registry.events_after(record.run_id, seq):
        return Response(status_code=204)
    return EventSourceResponse(_follow(request, record, seq), ping=15)
