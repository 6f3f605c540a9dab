"""The AG-UI endpoint: ``POST /v1/agui`` runs the agent for an AG-UI client (CopilotKit, ...).

The body is AG-UI's ``RunAgentInput``; the answer a stream of AG-UI events (SSE, encoded
by the official ``EventEncoder``, see ``ponder.protocols.agui_events``). The last user
message is the prompt, the earlier messages its history; ``context`` and ``state`` reach
the agent as system messages; ``tools`` are the frontend's: when the agent calls one the
run finishes with the call pending (``outcome.pendingToolCallIds``), and a next request
whose trailing ``tool`` messages answer it resumes the same stored run. A call that needs
approval, or an MCP server's question, ends the stream with an ``interrupt`` outcome; a
request with ``resume`` entries answers it. The same ``threadId`` and ``runId`` sent again
replay the run's events from the start (a dropped stream resumes, from the store too).

`agui_app` is the endpoint alone, to mount in another ASGI app.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ponder.extras import require

require("agui", "the AG-UI endpoint")

from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    BaseEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunStartedEvent,
)
from ag_ui.core import (
    ToolMessage as AguiTool,
)
from ag_ui.core import (
    UserMessage as AguiUser,
)
from ag_ui.encoder import EventEncoder
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from ponder.exceptions import RunLeaseError, UserError
from ponder.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
    parse_arguments,
)
from ponder.protocols.agui_events import AguiTranslator, split_interrupt_id
from ponder.server.held_answer import HeldAnswer
from ponder.server.launcher import Launcher
from ponder.server.local_launcher import AgentSource, RunConflict, RunLauncher
from ponder.server.openai_request import split_call_id
from ponder.server.runs import TERMINAL_KINDS, MemoryRunRegistry, RunRecord
from ponder.store.base import Store
from ponder.tools.definition import ToolDefinition

__all__ = ["AGUI_PATH", "agui_app", "router"]

AGUI_PATH = "/v1/agui"
_WAIT_SECONDS = 10.0
_NAMESPACE = uuid.UUID("5b1c62f5-3a47-4d1b-9d0e-2f7f7a0c9a31")

router = APIRouter(tags=["ag-ui"])


class AguiError(Exception):
    """A request AG-UI cannot run (answered with 400 before any event)."""


def _run_id_of(body: RunAgentInput) -> str:
    """The ponder run of an AG-UI thread's run: the same ids always name the same run."""
    return uuid.uuid5(_NAMESPACE, f"{body.thread_id}\x00{body.run_id}").hex


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content or []
    return "".join(str(getattr(p, "text", "") or "") for p in parts)


def _history(body: RunAgentInput) -> tuple[str, list[Message]]:
    """The prompt (the last user message) and the history before it."""
    messages = list(body.messages)
    if not messages or not isinstance(messages[-1], AguiUser):
        raise AguiError("the last message must be the user's (or tool results, or resume)")
    prompt = _text(messages[-1].content)
    if not prompt.strip():
        raise AguiError("the last user message has no text")
    history: list[Message] = []
    for entry in body.context or []:
        history.append(SystemMessage(content=f"Context ({entry.description}): {entry.value}"))
    if body.state not in (None, {}):
        state = json.dumps(body.state, ensure_ascii=False)
        history.append(SystemMessage(content=f"The application's state: {state}"))
    names: dict[str, str] = {}
    for message in messages[:-1]:
        if message.role in ("system", "developer"):
            history.append(SystemMessage(content=_text(message.content)))
        elif isinstance(message, AguiUser):
            history.append(UserMessage(content=_text(message.content)))
        elif isinstance(message, AguiAssistant):
            history.extend(_assistant(message, names))
        elif isinstance(message, AguiTool) and message.tool_call_id in names:
            name = names.pop(message.tool_call_id)
            history.append(
                ToolMessage(call_id=message.tool_call_id, name=name, content=_text(message.content))
            )
    return prompt, history


def _assistant(message: AguiAssistant, names: dict[str, str]) -> list[Message]:
    parts: list[Any] = [TextPart(text=message.content)] if message.content else []
    for call in message.tool_calls or []:
        args, error = parse_arguments(call.function.arguments)
        parts.append(
            ToolCallPart(
                id=call.id,
                name=call.function.name,
                arguments=call.function.arguments,
                args=args,
                args_error=error,
            )
        )
        names[call.id] = call.function.name
    return [AssistantMessage(parts=tuple(parts))] if parts else []


def _frontend_tools(body: RunAgentInput) -> list[ToolDefinition]:
    names = [t.name for t in body.tools or []]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise AguiError(f"tools: the name {repeated[0]!r} is given twice")
    return [
        ToolDefinition(
            name=t.name,
            description=t.description,
            parameters=t.parameters or {"type": "object", "properties": {}},
        )
        for t in body.tools or []
    ]


def _tool_results(body: RunAgentInput) -> tuple[str, dict[str, Any]] | None:
    """The run the trailing tool messages answer, and the resume decision they make."""
    trailing: list[AguiTool] = []
    for message in reversed(body.messages):
        if not isinstance(message, AguiTool):
            break
        trailing.insert(0, message)
    ours = [(m, split_call_id(m.tool_call_id)) for m in trailing]
    found = {ids[0] for _, ids in ours if ids is not None}
    if not found:
        return None
    if len(found) > 1 or any(ids is None for _, ids in ours):
        raise AguiError("the trailing tool messages answer calls of different runs")
    decision = {ids[1]: {"action": "result", "output": _text(m.content)} for m, ids in ours if ids}
    return found.pop(), decision


def _resume_decision(entries: list[ResumeEntry]) -> tuple[str, dict[str, Any]]:
    """The run ``resume`` answers, and its decision per pending call or question."""
    runs: set[str] = set()
    decision: dict[str, Any] = {}
    for entry in entries:
        ids = split_interrupt_id(entry.interrupt_id)
        if ids is None:
            raise AguiError(f"resume: {entry.interrupt_id!r} is not an interrupt of this server")
        runs.add(ids[0])
        decision[ids[1]] = _answer(entry)
    if len(runs) != 1:
        raise AguiError("resume: the entries answer interrupts of different runs")
    return runs.pop(), decision


def _answer(entry: ResumeEntry) -> Any:
    payload = entry.payload
    if entry.status == "cancelled":
        return {"action": "reject", "reason": "cancelled by the user"}
    if isinstance(payload, dict) and "approved" in payload:
        if payload["approved"] is True:
            return "approve"
        return {"action": "reject", "reason": str(payload.get("reason") or "rejected by the user")}
    if isinstance(payload, dict) and "action" in payload:
        return payload
    if isinstance(payload, dict):
        return {"action": "accept", "content": payload}
    if payload in ("approve", "reject"):
        return payload
    raise AguiError("resume: a payload is {approved: bool}, a decision or an answer object")


async def _begin(launcher: Launcher, body: RunAgentInput) -> tuple[RunRecord, int]:
    """Start, resume or find again the ponder run the request is about; its first seq."""
    if body.resume:
        run_id, decision = _resume_decision(list(body.resume))
        return await _resume(launcher, run_id, decision)
    results = _tool_results(body)
    if results is not None:
        return await _resume(launcher, *results)
    run_id = _run_id_of(body)
    known = await launcher.lookup(run_id)
    if known is not None and known.run_id == run_id:
        return known, 0  # the same request again: replay the run from the start
    prompt, history = _history(body)
    tools = _frontend_tools(body)
    if not isinstance(launcher, RunLauncher):
        raise AguiError("the AG-UI endpoint needs runs started by this server")
    record = launcher.start(prompt, history, external_tools=tools, resumable=True, run_id=run_id)
    return record, 0


async def _resume(launcher: Launcher, run_id: str, decision: Any) -> tuple[RunRecord, int]:
    record = await launcher.lookup(run_id)
    if record is None:
        raise AguiError(f"no run {run_id!r} waits for this answer")
    seq = record.last_seq
    try:
        await launcher.resume(record, decision)
    except (RunConflict, RunLeaseError) as error:
        raise AguiError(str(error)) from None
    return record, seq


async def _events(
    launcher: Launcher, body: RunAgentInput, record: RunRecord, seq: int
) -> AsyncIterator[BaseEvent]:
    """The run's AG-UI events; its answer's text only once the run accepted it (`HeldAnswer`)."""
    registry, ended, held = launcher.registry, False, HeldAnswer()
    translator = AguiTranslator(body.thread_id, body.run_id)
    yield RunStartedEvent(thread_id=body.thread_id, run_id=body.run_id, input=body)
    while not ended:
        for event in registry.events_after(record.run_id, seq):
            seq = int(event["seq"])
            ended = ended or event["kind"] in TERMINAL_KINDS or event["kind"] == "run_suspended"
            for shown in held.feed(event):
                for out in translator.translate(shown):
                    yield out
        if not ended and not record.is_done:
            await registry.wait(record.run_id, seq, _WAIT_SECONDS)
        ended = ended or (record.is_done and not registry.events_after(record.run_id, seq))
    await launcher.wait(record.run_id)
    for out in translator.run_end(record):
        yield out


async def _encoded(events: AsyncIterator[BaseEvent], encoder: EventEncoder) -> AsyncIterator[str]:
    try:
        async for event in events:
            yield encoder.encode(event)
    except Exception as error:  # the stream has begun: the error is its last event
        yield encoder.encode(RunErrorEvent(message=str(error), code=type(error).__name__))


def _error(status: int, message: str) -> JSONResponse:
    body = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return JSONResponse({"error": body}, status_code=status)


@router.post(AGUI_PATH)
async def run_agent(request: Request) -> Any:
    """Run the agent for an AG-UI ``RunAgentInput``; the answer is its event stream."""
    try:
        body = RunAgentInput.model_validate(await request.json())
    except ValueError as error:  # ValidationError is one; so is bad JSON
        detail = error.errors()[:3] if isinstance(error, ValidationError) else str(error)
        return _error(400, f"the body is not an AG-UI RunAgentInput: {detail}")
    launcher: Launcher = request.app.state.launcher
    try:
        record, seq = await _begin(launcher, body)
    except (AguiError, UserError) as error:
        return _error(400, str(error))
    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    stream = _encoded(_events(launcher, body, record, seq), encoder)
    return StreamingResponse(stream, media_type=encoder.get_content_type())


def agui_app(agent: AgentSource, *, store: Store | None = None) -> FastAPI:
    """The AG-UI endpoint alone (``POST /v1/agui``), for mounting in another ASGI app.

    With a ``store`` the runs are checkpointed there (interrupts survive a restart).
    """
    launcher = RunLauncher(agent, MemoryRunRegistry(), store)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await launcher.shutdown()

    app = FastAPI(title="ponder AG-UI", lifespan=lifespan)
    app.state.launcher = launcher
    app.include_router(router)
    return app
