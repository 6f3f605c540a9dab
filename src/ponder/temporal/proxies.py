"""Workflow-side stand-ins that turn ponder's seams into activities.

`ActivityModel` is a `Model`, `ActivityToolExecutor` a `ToolExecutor` and
`ActivityRetriever` a `Retriever`; the run's program uses them as it would the real ones.
A batch still runs concurrently (one activity per call); calls of one stateful tool take
turns, each getting the state the previous one left. A call whose worker was lost is
retried only if its tool is ``idempotent``; otherwise it ends in an ``interrupted`` error
result for that call alone.

A model request's conversation does not travel in the activity's input: the workflow
keeps it in a `ModelChannel` under a request number, and the activity reads it with the
``request_messages`` Query. The input would otherwise hold the whole ledger every round,
so a run's history would grow with the square of its rounds; this way each round adds
what is new (the response, the tool results) and the history grows linearly. A replay
needs nothing extra: it never runs the activity, and a Query reads the replayed state.
The same channel carries the request's text as it streams (see `ModelChannel.push`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ActivityCancellationType

from ponder.config import AgentConfig
from ponder.exceptions import ModelError, RunError, ToolError
from ponder.mcp.elicitation import InputHold
from ponder.messages import ToolCallPart
from ponder.models.base import (
    ModelRequest,
    ModelResponse,
    StreamEvent,
    ToolDefinition,
)
from ponder.retrieval import Passage
from ponder.temporal.activities import TOOL_UNAVAILABLE
from ponder.temporal.channel import ModelChannel
from ponder.temporal.children import run_child
from ponder.temporal.inputs import answer_data, note_held
from ponder.temporal.patching import SUB_AGENT_CHILDREN
from ponder.temporal.payloads import outcome_from_data, request_to_data, response_from_data
from ponder.temporal.tracing import RunTrace
from ponder.tools.executor import ToolExecutor, ToolIntercept, ToolOutcome
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = [
    "INTERRUPTED",
    "ActivityModel",
    "ActivityOptions",
    "ActivityRetriever",
    "ActivityToolExecutor",
    "ModelChannel",
    "registry_from_specs",
]

INTERRUPTED = (
    "interrupted: the worker running this call was lost and its tool is not marked "
    "idempotent, so it was not run again. Check its effect before calling it again."
)
_GRACE = 30.0


@dataclass(frozen=True, slots=True)
class ActivityOptions:
    """What every activity of one run shares: the agent's name, its config, heartbeats.

    ``wait_cancel``: a cancelled run waits until its activities have stopped (runs begun
    before that change, without its patch marker, do not).
    """

    agent: str
    config: AgentConfig
    heartbeat_timeout: float
    wait_cancel: bool = False
    trace: RunTrace | None = None
    """Where the activities' spans go, when the worker that prepared the run traces it."""

    @property
    def attempts(self) -> int:
        """Attempts for a step that may run again: the config's ``max_retries`` + 1."""
        return self.config.max_retries + 1

    def run(self, name: str, data: Any, *, seconds: float, attempts: int) -> Awaitable[Any]:
        """Start activity ``name`` with ``data``; awaiting it gives the result."""
        return workflow.execute_activity(
            name,
            data,
            start_to_close_timeout=timedelta(seconds=seconds + _GRACE),
            heartbeat_timeout=timedelta(seconds=self.heartbeat_timeout),
            retry_policy=RetryPolicy(maximum_attempts=attempts),
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
            if self.wait_cancel
            else ActivityCancellationType.TRY_CANCEL,
        )


def _cause(error: ActivityError) -> BaseException:
    return error.cause if error.cause is not None else error


def _described(error: ActivityError) -> str:
    cause = _cause(error)
    kind = cause.type if isinstance(cause, ApplicationError) and cause.type else type(cause)
    name = kind if isinstance(kind, str) else kind.__name__
    return f"{name}: {cause}"


class ActivityModel:
    """A `Model` whose every request is one ``ponder.model_request`` activity."""

    def __init__(self, name: str, options: ActivityOptions, channel: ModelChannel) -> None:
        self._name = name
        self.options = options
        self.channel = channel
        self._prices: dict[int, float | None] = {}

    @property
    def name(self) -> str:
        """The worker's model name."""
        return self._name

    def price(self, response: ModelResponse) -> float | None:
        """What the worker priced ``response`` at (None: a model without a known price).

        Prices are looked up in the activity, outside the workflow's sandbox, and kept in
        the history, so a replay shows the cost the run had.
        """
        return self._prices.pop(id(response), None)

    def _response(self, raw: dict[str, Any]) -> ModelResponse:
        data = dict(raw)
        cost = data.pop("cost", None)
        if self.options.trace is not None:
            self.options.trace.opened(data)
        data.pop("round_traceparent", None)
        response = response_from_data(data)
        self._prices[id(response)] = cost if isinstance(cost, int | float) else None
        return response

    def _start(self, request: ModelRequest, key: int, stream: bool) -> Awaitable[Any]:
        config, options = self.options.config, self.options
        data = request_to_data(request)
        data["messages"] = None  # read by the activity with the request_messages Query
        payload = {"agent": options.agent, "request": data, "messages_ref": key, "stream": stream}
        if options.trace is not None:
            payload["trace"] = options.trace.for_request()
        seconds = config.llm_timeout * options.attempts
        return options.run(
            "ponder.model_request", payload, seconds=seconds, attempts=options.attempts
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` from a worker; a provider failure raises `ModelError`."""
        key = self.channel.open(request)
        try:
            raw = await self._start(request, key, stream=False)
        except ActivityError as error:
            raise ModelError(f"the model request failed: {_described(error)}") from None
        finally:
            self.channel.close(key)
        return self._response(raw)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The text as the worker's model streams it, then the whole response."""
        channel = self.channel
        key = channel.open(request)
        task = asyncio.ensure_future(self._start(request, key, stream=True))
        try:
            while True:
                await workflow.wait_condition(lambda: channel.has(key) or task.done())
                for delta in channel.take(key):
                    yield delta
                if task.done():
                    break
            try:
                raw = task.result()
            except ActivityError as error:
                raise ModelError(f"the model request failed: {_described(error)}") from None
        finally:
            channel.close(key)
            if not task.done():
                task.cancel()
        yield self._response(raw)


class ActivityRetriever:
    """A `Retriever` that asks a worker (``ponder.retrieve``)."""

    def __init__(self, options: ActivityOptions) -> None:
        self.options = options

    async def retrieve(self, query: str, limit: int) -> list[Passage]:
        """At most ``limit`` passages for ``query``."""
        options = self.options
        data = {"agent": options.agent, "query": query, "limit": limit}
        try:
            raw = await options.run(
                "ponder.retrieve", data, seconds=options.config.tool_timeout, attempts=3
            )
        except ActivityError as error:
            raise RunError(f"retrieval failed: {_described(error)}") from None
        return [Passage(**item) for item in raw]


async def _never_called(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    raise ToolError(f"tool {ctx.tool_name!r} runs on a worker, not in the workflow")


class _StateHolder(BaseModel):
    """Stands in for a stateful tool's state type: the state travels as JSON data."""

    model_config = {"extra": "allow"}


def registry_from_specs(specs: Sequence[dict[str, Any]]) -> ToolRegistry:
    """The run's tools as the workflow sees them: definitions and flags, run elsewhere."""
    tools = []
    for spec in specs:
        definition = ToolDefinition.model_validate(spec["definition"])
        tools.append(
            Tool(
                name=definition.name,
                description=definition.description,
                parameters=definition.parameters,
                function=_never_called,
                timeout=spec.get("timeout"),
                requires_approval=bool(spec.get("requires_approval")),
                idempotent=bool(spec.get("idempotent")),
                state_type=_StateHolder if spec.get("stateful") else None,
                builtin=bool(spec.get("builtin")),
                strict=definition.strict,
                metadata=_sub_agent_metadata(spec),
            )
        )
    return ToolRegistry(tools)


def _sub_agent_metadata(spec: dict[str, Any]) -> dict[str, Any]:
    """A sub-agent tool's worker name and the limits its runs get (nothing for other tools)."""
    if not spec.get("sub_agent"):
        return {}
    return {"sub_agent": spec["sub_agent"], "limits": spec.get("sub_agent_limits")}


class ActivityToolExecutor(ToolExecutor):
    """Runs each call of a batch as its own ``ponder.tool_call`` activity, concurrently."""

    def __init__(self, registry: ToolRegistry, options: ActivityOptions) -> None:
        super().__init__(registry, default_timeout=options.config.tool_timeout)
        self.options = options
        self.on_child: Callable[[ToolCallPart, dict[str, Any]], None] | None = None
        """Told of each finished sub-agent run (its result data), to roll it up."""
        self.inputs: InputHold | None = None
        """The run's held MCP questions and their answers (see ``ponder.temporal.inputs``)."""
        self.child_budget: dict[str, Any] | None = None
        """The history budget a sub-agent's run is given (run input; None: the default)."""

    async def run_batch(
        self,
        calls: Sequence[ToolCallPart],
        *,
        run_id: str,
        states: MutableMapping[str, BaseModel] | None = None,
        deps: Any = None,
        on_start: Callable[[ToolCallPart], Any] | None = None,
        on_finish: Callable[[ToolOutcome], Any] | None = None,
        intercept: ToolIntercept | None = None,
        run: Any = None,
    ) -> list[ToolOutcome]:
        """One outcome per call, in call order; cancelling cancels the calls still running.

        ``intercept`` is not applied: a workflow's runs are recorded by Temporal itself;
        ``run`` neither: a sub-agent call runs as a child workflow of its own.
        """
        held = {} if states is None else states
        locks: dict[str, asyncio.Lock] = {}

        async def one(call: ToolCallPart) -> ToolOutcome:
            await _notify(on_start, call)
            tool = self.registry.get(call.name)
            lock = None
            if tool is not None and tool.state_type is not None:
                lock = locks.setdefault(call.name, asyncio.Lock())
            async with lock if lock is not None else contextlib.nullcontext():
                outcome = await self._call(call, tool, run_id, held)
            await _notify(on_finish, outcome)
            return outcome

        tasks = [asyncio.ensure_future(one(call)) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except GeneratorExit:  # the worker evicts the run from its cache: await nothing now
            raise
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _call(
        self,
        call: ToolCallPart,
        tool: Tool | None,
        run_id: str,
        states: MutableMapping[str, BaseModel],
    ) -> ToolOutcome:
        options = self.options
        state = states.get(call.name)
        data = {
            "agent": options.agent,
            "run_id": run_id,
            "call": call.model_dump(mode="json"),
            "offered": tool is not None,
            "state": _state_data(state),
        }
        if self.inputs is not None:
            data["hold"], data["answer"] = True, answer_data(self.inputs, call.id)
        if options.trace is not None:
            data["trace"] = options.trace.for_call()
        if (
            tool is not None
            and tool.metadata.get("sub_agent")
            and workflow.patched(SUB_AGENT_CHILDREN)
        ):
            return await run_child(
                call,
                tool,
                run_id,
                options.heartbeat_timeout,
                self.on_child,
                history_budget=self.child_budget,
                traceparent=data["trace"]["parent"] if "trace" in data else None,
            )
        timeout = (tool.timeout if tool is not None else None) or options.config.tool_timeout
        attempts = options.attempts if tool is not None and tool.idempotent else 1
        try:
            raw = await options.run("ponder.tool_call", data, seconds=timeout, attempts=attempts)
        except ActivityError as error:
            return self._lost(call, tool, error)
        if raw.get("state") is not None:
            states[call.name] = _StateHolder.model_validate(raw["state"])
        note_held(self.inputs, call.id, raw.get("held"))
        return outcome_from_data(call, raw)

    def _lost(self, call: ToolCallPart, tool: Tool | None, error: ActivityError) -> ToolOutcome:
        cause = _cause(error)
        if isinstance(cause, ApplicationError) and cause.type == TOOL_UNAVAILABLE:
            raise ToolError(str(cause)) from None
        if tool is not None and not tool.idempotent:
            result = ToolResult.fail(INTERRUPTED)
        else:
            result = ToolResult.fail(f"the call failed on every attempt: {_described(error)}")
        return ToolOutcome(call, result, "error", 0.0, result.to_message(call))


def _state_data(state: Any) -> Any:
    """A stateful tool's state as JSON data; a run continued as new holds it as data already."""
    return state.model_dump(mode="json") if isinstance(state, BaseModel) else state


async def _notify(callback: Callable[[Any], Any] | None, value: Any) -> None:
    if callback is None:
        return
    returned = callback(value)
    if inspect.isawaitable(returned):
        await returned
