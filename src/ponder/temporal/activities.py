"""The activities a ponder workflow runs: every step of a run that touches the world.

``prepare`` describes the worker's agent (config, strategy, tools — its MCP servers'
among them) once per run, so the history holds what the run was offered;
``model_request`` sends one request (the model adapter keeps its own retries);
``tool_call`` runs one call (an MCP server's too, on the worker's session) through
ponder's executor, so a failing, hung or unknown call still ends in that call's error
result; ``retrieve`` feeds RAG mode. A model request reads its conversation from the
workflow (the ``request_messages`` Query) and sends the text it streams back as
``model_deltas`` Signals, a few a second (see ``ponder.temporal.proxies``). Each
heartbeats while it works, so a lost worker is noticed in a heartbeat timeout. Errors
that another attempt cannot fix are raised as non-retryable ``ApplicationError`` whose
``type`` names the ponder exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from ponder.agent import Agent, AgentStrategy, UsageLimits
from ponder.agent.strategies.rag import RagStrategy
from ponder.cost import request_cost
from ponder.exceptions import ModelResponseError, PonderError
from ponder.messages import ToolCallPart
from ponder.models.base import ModelRequest, ModelResponse
from ponder.observability.instrumentation import resolve_instrumentation
from ponder.retrieval import Retriever, index_folder
from ponder.temporal.inputs import held_data, hold_from_data
from ponder.temporal.payloads import (
    outcome_to_data,
    request_from_data,
    response_to_data,
    tool_spec,
)
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool

if TYPE_CHECKING:
    from ponder.temporal.spans import ActivitySpans

__all__ = [
    "TOOL_UNAVAILABLE",
    "UNKNOWN_AGENT",
    "PonderActivities",
    "strategy_path",
    "with_sub_agents",
]

TOOL_UNAVAILABLE = "ToolUnavailable"
"""The error type of a call whose tool the run was offered but this worker lacks."""
UNKNOWN_AGENT = "UnknownAgent"


def strategy_path(strategy: type[AgentStrategy]) -> str:
    """``module:qualname`` of the first class in ``strategy``'s MRO that can be imported."""
    for cls in strategy.__mro__:
        path = f"{cls.__module__}:{cls.__qualname__}"
        module = importlib.import_module(cls.__module__)
        if getattr(module, cls.__qualname__, None) is cls:
            return path
    raise PonderError(f"strategy {strategy!r} has no importable class")  # pragma: no cover


def with_sub_agents(agents: Mapping[str, Agent]) -> dict[str, Agent]:
    """``agents``, and each sub-agent they call (at any depth) under ``<caller>/<tool>``.

    A sub-agent's calls run as a child workflow of the caller's run, on the agent of
    that name; the names depend only on how the agents are built, so every worker of a
    task queue agrees on them.
    """
    found = dict(agents)
    pending = list(found.items())
    while pending:
        name, agent = pending.pop()
        for tool in agent.toolbox.base:
            child = tool.metadata.get("agent")
            key = f"{name}/{tool.name}"
            if isinstance(child, Agent) and key not in found:
                found[key] = child
                pending.append((key, child))
    return found


@contextlib.asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat in the background, a few times per heartbeat timeout, while the body runs."""
    timeout = activity.info().heartbeat_timeout
    if timeout is None:
        yield
        return
    interval = max(timeout.total_seconds() / 4, 0.05)

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(interval)

    task = asyncio.ensure_future(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _fatal(error: BaseException) -> ApplicationError:
    return ApplicationError(str(error), type=type(error).__name__, non_retryable=True)


def _spans(agent: Agent, trace_data: Any) -> ActivitySpans | None:
    """The spans of an activity of a traced run, on a worker whose agent traces (else None)."""
    if not isinstance(trace_data, dict):
        return None
    settings = resolve_instrumentation(agent.instrument)
    if settings is None:
        return None
    from ponder.temporal.spans import ActivitySpans  # OpenTelemetry only when tracing

    return ActivitySpans(settings, trace_data)


@contextlib.contextmanager
def _traced_request(spans: ActivitySpans | None, model: str) -> Iterator[dict[str, Any]]:
    if spans is None:
        yield {}
        return
    with spans.request(model, activity.info().attempt) as found:
        yield found


@contextlib.contextmanager
def _traced_call(spans: ActivitySpans | None, call: ToolCallPart) -> Iterator[dict[str, Any]]:
    if spans is None:
        yield {}
        return
    with spans.tool(call) as found:
        yield found


DELTA_INTERVAL = 0.25
"""Seconds between two ``model_deltas`` Signals of one streaming request."""


class _DeltaSender:
    """Batches a streaming request's text into a Signal to its workflow now and then.

    The first piece goes at once (the observer sees the answer start), later ones at most
    every ``DELTA_INTERVAL`` seconds, and what is left just before the response.
    """

    def __init__(self, handle: WorkflowHandle[Any, Any], key: int) -> None:
        self.handle, self.key = handle, key
        self.attempt = activity.info().attempt
        self._pending: list[list[str]] = []
        self._sent = float("-inf")

    async def add(self, kind: str, text: str) -> None:
        if self._pending and self._pending[-1][0] == kind:
            self._pending[-1][1] += text
        else:
            self._pending.append([kind, text])
        if time.monotonic() - self._sent >= DELTA_INTERVAL:
            await self.flush()

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        self._sent = time.monotonic()
        if not pending:
            return
        data = {"key": self.key, "attempt": self.attempt, "deltas": pending}
        with contextlib.suppress(RPCError):  # the text is a courtesy; the response is not lost
            await self.handle.signal("model_deltas", data)


class PonderActivities:
    """The activities of one worker, over the agents it serves (by name)."""

    def __init__(
        self, agents: Mapping[str, Agent], *, deps: Any = None, client: Client | None = None
    ) -> None:
        self.agents = with_sub_agents(agents)
        self.deps = deps
        self.client = client
        self._executors: dict[tuple[str, int], ToolExecutor] = {}

    def _agent(self, name: str) -> Agent:
        agent = self.agents.get(name)
        if agent is None:
            raise ApplicationError(
                f"this worker has no agent {name!r} (it serves: {', '.join(self.agents)})",
                type=UNKNOWN_AGENT,
                non_retryable=True,
            )
        return agent

    def _executor(self, name: str, agent: Agent, registry: ToolRegistry) -> ToolExecutor:
        key = (name, id(registry))
        executor = self._executors.get(key)
        if executor is None:
            config = agent.config
            executor = self._executors[key] = ToolExecutor(
                registry,
                default_timeout=config.tool_timeout,
                max_output_chars=config.tool_output_max_chars,
            )
        return executor

    @activity.defn(name="ponder.prepare")
    async def prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        """The agent a run uses: config (no secrets), instructions, strategy and tools."""
        agent = self._agent(data["agent"])
        async with _heartbeating():  # a lost worker is noticed while MCP servers start
            registry = await agent.toolbox.refresh()
        missing = [n for n in data.get("require_tools", ()) if registry.get(n) is None]
        if missing:
            raise ApplicationError(
                f"the worker on task queue {activity.info().task_queue!r} has no tool "
                f"{', '.join(map(repr, missing))} (it has: {', '.join(registry.names)})",
                type=TOOL_UNAVAILABLE,
                non_retryable=True,
            )
        try:
            model_name = agent.model.name
        except PonderError as error:
            raise _fatal(error) from error
        strategy = agent.strategy_type
        spec = {
            "config": agent.config.model_dump(mode="json", exclude={"api_key"}),
            "instructions": agent.instructions,
            "model": model_name,
            "strategy": strategy_path(strategy),
            "tools": [self._spec(data["agent"], t) for t in registry],
            # no one answers an MCP server's question live: it suspends the run
            "holds_input": agent.toolbox.mcp is not None and agent.toolbox.elicitation is None,
            # RAG from an index retrieves on a worker; without one it retrieves with its tools
            "retrieves": issubclass(strategy, RagStrategy)
            and strategy.has_index(agent.config.rag_index_path),
        }
        spans = _spans(agent, {"run_id": data.get("run_id", ""), "parent": data.get("traceparent")})
        if spans is not None:  # the run's span; the history keeps where its children go
            spec["traceparent"] = spans.run_span(model_name, agent.config.agent_workflow)
        return spec

    @staticmethod
    def _spec(agent: str, tool: Tool) -> dict[str, Any]:
        spec = tool_spec(tool)
        if isinstance(tool.metadata.get("agent"), Agent):
            spec["sub_agent"] = f"{agent}/{tool.name}"  # runs as a child workflow
            limits = tool.metadata.get("limits")
            if isinstance(limits, UsageLimits):  # the child's own, as `as_tool` gave them
                spec["sub_agent_limits"] = limits.model_dump(exclude_none=True)
        return spec

    @activity.defn(name="ponder.model_request")
    async def model_request(self, data: dict[str, Any]) -> dict[str, Any]:
        """One model request; provider errors left after the adapter's retries are final."""
        agent = self._agent(data["agent"])
        spans = _spans(agent, data.get("trace"))
        async with _heartbeating():
            request = await self._request(data)
            with _traced_request(spans, agent.model.name) as traced:
                try:
                    if data.get("stream"):
                        ref = int(data["messages_ref"])
                        response = await self._streamed(agent, request, ref)
                    else:
                        response = await agent.model.request(request)
                except PonderError as error:
                    raise _fatal(error) from error
                traced["response"] = response
        found = response_to_data(response)
        found["cost"] = request_cost(agent.model.name, response.usage, time.time())
        if traced.get("round_traceparent"):
            found["round_traceparent"] = traced["round_traceparent"]
        return found

    def _workflow(self) -> WorkflowHandle[Any, Any]:
        info = activity.info()
        client = self.client if self.client is not None else activity.client()
        return client.get_workflow_handle(str(info.workflow_id), run_id=info.workflow_run_id)

    async def _request(self, data: dict[str, Any]) -> ModelRequest:
        """The request, its conversation read from the workflow when sent by reference."""
        raw = dict(data["request"])
        if raw.get("messages") is None:
            found = await self._workflow().query("request_messages", int(data["messages_ref"]))
            if found is None:
                raise ApplicationError(
                    "the workflow no longer waits for this model request",
                    type="RequestGone",
                    non_retryable=True,
                )
            raw["messages"] = found
        try:
            return request_from_data(raw)
        except (ValueError, TypeError, KeyError) as error:
            raise _fatal(error) from error

    async def _streamed(self, agent: Agent, request: ModelRequest, key: int) -> ModelResponse:
        sender = _DeltaSender(self._workflow(), key)
        final: ModelResponse | None = None
        async for item in agent.model.stream(request):
            if isinstance(item, ModelResponse):
                final = item
            elif item.kind in ("text_delta", "reasoning_delta"):
                await sender.add("text" if item.kind == "text_delta" else "reasoning", item.text)
        await sender.flush()
        if final is None:
            raise ModelResponseError("the model's stream ended without a response")
        return final

    @activity.defn(name="ponder.tool_call")
    async def tool_call(self, data: dict[str, Any]) -> dict[str, Any]:
        """One tool call through ponder's executor; returns its outcome and the tool's state."""
        agent = self._agent(data["agent"])
        registry = await agent.toolbox.refresh()
        call = ToolCallPart.model_validate(data["call"])
        found = registry.get(call.name)
        if found is None and data.get("offered", False):
            raise ApplicationError(
                f"the worker on task queue {activity.info().task_queue!r} has no tool "
                f"{call.name!r}, which the run was offered (it has: {', '.join(registry.names)})",
                type=TOOL_UNAVAILABLE,
                non_retryable=True,
            )
        states: dict[str, Any] = {}
        if found is not None and found.state_type is not None and data.get("state") is not None:
            states[call.name] = found.state_type.model_validate(data["state"])
        executor = self._executor(data["agent"], agent, registry)
        # an MCP server's call is bound to the run, so its sampling asks the worker's model
        hold = hold_from_data(call.id, data.get("answer"))
        with agent.toolbox.bind(data["run_id"], agent.model) as binding:
            if binding is not None and data.get("hold") and binding.elicit is None:
                binding.hold = hold
            async with _heartbeating():
                with _traced_call(_spans(agent, data.get("trace")), call) as traced:
                    outcome = await executor.run_call(
                        call, run_id=data["run_id"], states=states, deps=self.deps
                    )
                    traced["outcome"] = outcome
        state = states.get(call.name)
        return {
            **outcome_to_data(outcome),
            "state": None if state is None else state.model_dump(mode="json"),
            "held": held_data(hold, call.id),
        }

    @activity.defn(name="ponder.retrieve")
    async def retrieve(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Passages for RAG mode from the agent's retriever (or its ``rag_index_path``)."""
        agent = self._agent(data["agent"])
        retriever: Retriever | None = getattr(agent.strategy_type, "retriever", None)
        try:
            if retriever is None:
                if not agent.config.rag_index_path:
                    raise PonderError("RAG mode needs 'rag_index_path' or a bound retriever")
                retriever = index_folder(agent.config.rag_index_path)
            async with _heartbeating():
                passages = await retriever.retrieve(data["query"], int(data["limit"]))
        except PonderError as error:
            raise _fatal(error) from error
        return [
            {"source": p.source, "text": p.text, "score": p.score, "chunk": p.chunk}
            for p in passages
        ]

    def all(self) -> list[Any]:
        """The activity callables, for ``Worker(activities=...)``."""
        return [self.prepare, self.model_request, self.tool_call, self.retrieve]
