"""An A2A server for a ponder agent: its agent card and tasks over JSON-RPC.

```python
app = create_app(agent, store=FileStore(".ponder"))   # ponder serve mounts it
```

``GET /.well-known/agent-card.json`` describes the agent (its tools are its skills);
``POST /v1/a2a`` takes JSON-RPC: ``SendMessage``, ``SendStreamingMessage``, ``GetTask``,
``CancelTask``, ``SubscribeToTask`` (and A2A 0.3's ``message/send``, ``message/stream``,
``tasks/get``, ``tasks/cancel``, ``tasks/resubscribe``). A task is a ponder run: with a
store it survives a restart of the server and another process can continue it. A run
that waits for approval or an MCP server's question is ``input-required``; the next
message to the task answers it and the run resumes. The answer is the task's ``answer``
artifact (a typed answer as a data part).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ponder.extras import require

require("a2a", "the A2A server")

from a2a.helpers import get_data_parts, get_message_text, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.agent_execution.simple_request_context_builder import (
    SimpleRequestContextBuilder,
)
from a2a.server.events import EventQueue
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Message,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError
from google.protobuf.json_format import MessageToDict
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import ponder
from ponder.agent import Agent
from ponder.agent.output import OutputSpec
from ponder.exceptions import RunLeaseError, UserError
from ponder.protocols.a2a_tasks import RunTaskStore, answer_artifact, status_message
from ponder.server.launcher import Launcher
from ponder.server.local_launcher import RunConflict, RunLauncher
from ponder.server.runs import TERMINAL_KINDS, RunRecord
from ponder.store.view import pending_calls, pending_questions

__all__ = ["CARD_PATH", "RPC_PATH", "PonderExecutor", "a2a_routes", "agent_card"]

CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/v1/a2a"
_WAIT_SECONDS = 10.0
_YES = {"approve", "approved", "yes", "y", "ok"}
_NO = {"reject", "rejected", "no", "n", "deny"}


class _RunIds(IDGenerator):
    """Task ids that are valid run ids."""

    def generate(self, context: IDGeneratorContext) -> str:
        return uuid.uuid4().hex


class _TaskContexts(IDGenerator):
    """A new context is named after its first task, so a task rebuilt from its run keeps it."""

    def generate(self, context: IDGeneratorContext) -> str:
        return context.task_id or uuid.uuid4().hex


def agent_card(
    agent: Agent | None,
    url: str,
    *,
    name: str = "ponder",
    description: str | None = None,
    token: bool = False,
) -> AgentCard:
    """The card of the agent served at ``url`` (the JSON-RPC endpoint).

    Its skills are the agent's tools; with ``token`` it asks for a bearer token.
    """
    tools = agent.toolbox.base if agent is not None else []
    skills = [
        AgentSkill(
            id=t.name, name=t.name, description=t.definition.description or t.name, tags=["tool"]
        )
        for t in tools
    ]
    if not skills:
        skills = [AgentSkill(id="ask", name="ask", description="Ask the agent.", tags=["chat"])]
    about = (
        description
        or (agent.instructions.strip() if agent is not None else "")
        or ("A ponder agent: it reasons, calls its tools and answers.")
    )
    card = AgentCard(
        name=name,
        description=about,
        version=ponder.__version__,
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
    if token:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(
            SecurityRequirement(schemes={"bearer": StringList(list=[])})
        )
    return card


def _prompt_of(message: Message | None) -> str:
    """The text a message gives a new run (its data parts as JSON)."""
    if message is None:
        return ""
    text = get_message_text(message)
    data = [json.dumps(d, ensure_ascii=False) for d in get_data_parts(list(message.parts))]
    return "\n".join(p for p in [text, *data] if p.strip())


def _output_of(message: Message | None) -> OutputSpec | None:
    """The answer's type a message asks for (``metadata.output_schema``, a JSON Schema)."""
    if message is None or "output_schema" not in message.metadata:
        return None
    schema = MessageToDict(message.metadata).get("output_schema")
    if not isinstance(schema, dict):
        raise InvalidParamsError("metadata.output_schema must be a JSON Schema object")
    try:
        return OutputSpec(json_schema=schema, name="answer", argument="metadata.output_schema")
    except UserError as error:
        raise InvalidParamsError(str(error)) from None


def decision_of(message: Message | None, record: RunRecord) -> Any:
    """The resume decision a reply to an input-required task gives; `UserError` if none."""
    if message is None:
        raise UserError("the reply has no message")
    data = get_data_parts(list(message.parts))
    text = get_message_text(message).strip().lower()
    if record.status != "suspended":
        return None  # a run that crashed continues where it was
    if pending_calls(record.suspension):
        return _approval(text, data)
    questions = pending_questions(record.suspension)
    if questions:
        return _question_answer(str(questions[0].get("id")), text, data)
    return text or None


def _approval(text: str, data: list[Any]) -> Any:
    for item in data:
        if isinstance(item, dict) and "decision" in item:
            return item["decision"]
    if text in _YES:
        return "approve"
    if text in _NO:
        return "reject"
    raise UserError("answer the approval with 'approve' or 'reject' (or a decision data part)")


def _question_answer(question: str, text: str, data: list[Any]) -> Any:
    if text in ("decline", "cancel") and not data:
        return {question: {"action": text}}
    if data and isinstance(data[0], dict):
        return {question: {"action": "accept", "content": data[0]}}
    raise UserError("answer the question with a data part (or 'decline' / 'cancel')")


class PonderExecutor(AgentExecutor):
    """Runs each A2A task as a ponder run through the server's launcher."""

    def __init__(self, launcher: Launcher, tasks: RunTaskStore) -> None:
        self.launcher, self.tasks = launcher, tasks

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start the task's run, or resume it with the reply; follow it to its next stop."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            prompt = _prompt_of(context.message)
            if not prompt.strip():
                raise InvalidParamsError("the message has no text or data")
            self.tasks.contexts[task_id] = context_id
            record = self._start(prompt, task_id, _output_of(context.message))
            seq = 0
            await updater.submit()
        else:
            record = await self._lookup(task_id)
            try:
                decision = decision_of(context.message, record)
            except UserError as error:  # the run still waits: say what it needs
                message = status_message(record, context_id)
                if message is not None:
                    message.parts.insert(0, new_text_part(f"{error}."))
                await updater.requires_input(message)
                return
            seq = await self._resume(record, decision)
        await updater.start_work()
        await self._follow(record, seq, updater, context_id)

    def _start(self, prompt: str, task_id: str, output: OutputSpec | None) -> RunRecord:
        if isinstance(self.launcher, RunLauncher):
            return self.launcher.start(prompt, resumable=True, run_id=task_id, output=output)
        raise InvalidParamsError("A2A tasks need runs started by this server")

    async def _lookup(self, task_id: str) -> RunRecord:
        record = await self.launcher.lookup(task_id)
        if record is None:
            raise InvalidParamsError(f"no run {task_id!r} for this task")
        return record

    async def _resume(self, record: RunRecord, decision: Any) -> int:
        """Resume the run; the seq its new events come after."""
        seq = record.last_seq
        try:
            await self.launcher.resume(record, decision)
        except (UserError, RunConflict, RunLeaseError) as error:
            raise InvalidParamsError(str(error)) from None
        return seq

    async def _follow(
        self, record: RunRecord, seq: int, updater: TaskUpdater, context_id: str
    ) -> None:
        """Report the run's tool calls as it goes, and its outcome."""
        registry, ended = self.launcher.registry, False
        while not ended:
            for event in registry.events_after(record.run_id, seq):
                seq = int(event["seq"])
                ended = ended or event["kind"] in TERMINAL_KINDS or event["kind"] == "run_suspended"
                if event["kind"] == "tool_call_started":
                    note = updater.new_agent_message([new_text_part(f"calling {event['name']}")])
                    await updater.update_status(TaskState.TASK_STATE_WORKING, note)
            if not ended and not record.is_done:
                await registry.wait(record.run_id, seq, _WAIT_SECONDS)
            ended = ended or (record.is_done and not registry.events_after(record.run_id, seq))
        await self.launcher.wait(record.run_id)
        await self._finish(record, updater, context_id)

    async def _finish(self, record: RunRecord, updater: TaskUpdater, context_id: str) -> None:
        message = status_message(record, context_id)
        if record.status == "completed":
            answer = answer_artifact(record)
            await updater.add_artifact(list(answer.parts), artifact_id="answer", name="answer")
            await updater.complete()
        elif record.status == "suspended":
            await updater.requires_input(message)
        elif record.status == "cancelled":
            await updater.cancel(message)
        else:
            await updater.failed(message)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop the task's run (a waiting one is cancelled in the store)."""
        task_id = str(context.task_id)
        record = await self.launcher.lookup(task_id)
        if record is None or record.is_done:
            raise TaskNotCancelableError(f"task {task_id!r} has ended")
        if not self.launcher.cancel(task_id):
            await self.launcher.cancel_suspended(record)
        await self.launcher.wait(task_id)  # the run has recorded its cancellation
        await TaskUpdater(event_queue, task_id, str(context.context_id)).cancel()


def a2a_routes(
    launcher: Launcher,
    *,
    token: bool = False,
    name: str = "ponder",
    description: str | None = None,
) -> list[Route]:
    """The agent card route and the JSON-RPC route, to add to a Starlette or FastAPI app."""
    # a factory is not called here: it makes one agent per run (see `card` below)
    agent = launcher.fixed_agent if isinstance(launcher, RunLauncher) else None
    base = agent_card(
        agent, "http://localhost" + RPC_PATH, name=name, description=description, token=token
    )
    described: list[AgentCard] = []  # a factory's agent, described at the first card request
    builder = SimpleRequestContextBuilder(
        task_id_generator=_RunIds(), context_id_generator=_TaskContexts()
    )
    tasks = RunTaskStore(launcher)
    handler = DefaultRequestHandler(
        agent_executor=PonderExecutor(launcher, tasks),
        task_store=tasks,
        agent_card=base,
        request_context_builder=builder,
    )

    async def card(request: Request) -> JSONResponse:
        if not described:
            fresh = None
            if agent is None and isinstance(launcher, RunLauncher):
                fresh = launcher.agent()  # a factory's agent, made once for its description
            url = base.supported_interfaces[0].url
            described.append(
                base
                if fresh is None
                else agent_card(fresh, url, name=name, description=description, token=token)
            )
        served = AgentCard()
        served.CopyFrom(described[0])
        url = str(request.base_url).rstrip("/") + RPC_PATH
        served.supported_interfaces[0].url = url
        return JSONResponse(agent_card_to_dict(served))

    routes = [Route(CARD_PATH, card, methods=["GET"])]
    return routes + create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True)
