"""Starting one run of an agent: its fresh state, its context, and the taps that watch it.

`Agent.run`, `Agent.stream` and sub-agent calls all start here; `launch` takes a
`RunRequest` (the prompt and the run's options) to the driver.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ponder.agent.limits import UsageLimits
from ponder.agent.output import OutputSpec, restored_output
from ponder.agent.result import RunResult
from ponder.agent.run.build import build_context
from ponder.agent.run.context import ContextBuilder, EventSink, Resumed, RunContext, RunTools
from ponder.agent.run.driver import drive, prepare_start
from ponder.agent.run.sessions import session_tool_states
from ponder.agent.run.state import RunState
from ponder.agent.session_turns import (
    KeptTurn,
    kept_sessions,
    refuse_after_suspended,
    session_lease,
    turn_lock,
)
from ponder.media import File, Image, split_prompt
from ponder.messages import Ledger, Message, messages_from_json
from ponder.models.base import Usage
from ponder.observability.tap import RunTap
from ponder.observability.wiring import run_taps
from ponder.store.base import Store
from ponder.tools.definition import ToolDefinition
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from ponder.agent.agent import Agent
    from ponder.agent.run.deps import RunDeps, Strategy
    from ponder.mcp.elicitation import InputHold
    from ponder.vm import Interpreter

__all__ = [
    "Prompt",
    "RunRequest",
    "context_builder",
    "launch",
    "new_run",
    "new_state",
    "raising",
    "run_context",
    "run_tap",
]

Prompt: TypeAlias = str | Sequence[str | Image | File]
"""A run's prompt: text, or text with images and files (``[text, Image(...), File(...)]``)."""


@dataclass(frozen=True)
class RunRequest:
    """One run as `Agent.run` or `Agent.stream` was asked for it."""

    prompt: Prompt
    output: OutputSpec | None = None
    message_history: Sequence[Message] = ()
    deps: Any = None
    run_id: str | None = None
    session_id: str | None = None
    store: Store | None = None
    limits: UsageLimits | None = None
    external_tools: Sequence[ToolDefinition] = ()


async def raising(exc: BaseException) -> Any:
    """A coroutine that raises ``exc`` when awaited (a run refused before it began)."""
    raise exc


async def launch(
    agent: Agent[Any], request: RunRequest, sink: EventSink | None = None
) -> RunResult[Any]:
    """Run ``request`` on ``agent`` to its end; with a ``sink``, its events stream to it."""
    if request.session_id is not None:
        return await _launch_turn(agent, request, request.session_id, sink)
    state = await new_run(agent, request)
    state.limits = UsageLimits.of(request.limits)
    if agent.toolbox.mcp is not None:
        return await _launch_bound(agent, request, state, sink)
    # awaited from here (no `with`, no helper coroutine): a waiting run keeps fewer objects
    deps, vm, owner = await _prepare(agent, request, state, sink)
    store = request.store
    del request  # nor the request, which the run no longer reads
    return await drive(deps, vm, store, owner)


async def _launch_turn(
    agent: Agent[Any], request: RunRequest, session_id: str, sink: EventSink | None
) -> RunResult[Any]:
    """`launch` for a turn of a session: after the session's turn in progress, if any.

    With a store, the turn holds the session's lease there (`session_lease`), so a turn of
    another process waits too.
    """
    store = request.store
    async with turn_lock(agent if store is None else store, session_id):
        if store is None:
            return await _run_turn(agent, request, session_id, sink)
        async with session_lease(store, session_id):
            await refuse_after_suspended(store, session_id)
            return await _run_turn(agent, request, session_id, sink)


async def _run_turn(
    agent: Agent[Any], request: RunRequest, session_id: str, sink: EventSink | None
) -> RunResult[Any]:
    """One turn of a session, once it is the session's only one; kept without a store."""
    state = await new_run(agent, request)
    state.limits = UsageLimits.of(request.limits)
    if agent.toolbox.mcp is not None:
        result = await _launch_bound(agent, request, state, sink)
    else:
        deps, vm, owner = await _prepare(agent, request, state, sink)
        result = await drive(deps, vm, request.store, owner)
    if request.store is None and result.status == "completed":
        turn = KeptTurn(tuple(result.messages), dict(state.tool_states))
        kept_sessions(agent).keep(session_id, turn)
    return result


async def _launch_bound(
    agent: Agent[Any], request: RunRequest, state: RunState, sink: EventSink | None
) -> RunResult[Any]:
    """`launch` for an agent with MCP servers: the run is bound to them throughout."""
    with agent.toolbox.bind(state.run_id, agent.model):
        deps, vm, owner = await _prepare(agent, request, state, sink)
        return await drive(deps, vm, request.store, owner)


async def _prepare(
    agent: Agent[Any], request: RunRequest, state: RunState, sink: EventSink | None
) -> tuple[RunDeps[Strategy], Interpreter, str]:
    ctx = await run_context(
        agent,
        state,
        request.deps,
        sink,
        sink is not None,
        request.output,
        run_tap(agent),
        request.store,
    )
    return await prepare_start(ctx, agent.strategy_type, agent.program, request.store)


def new_state(
    agent: Agent[Any],
    prompt: str,
    *,
    message_history: Sequence[Message] = (),
    run_id: str | None = None,
    session_id: str | None = None,
) -> RunState:
    """A fresh run state of ``agent`` for ``prompt`` after ``message_history``."""
    return RunState(
        run_id=run_id or uuid.uuid4().hex,
        session_id=session_id,
        prompt=prompt,
        ledger=Ledger(message_history),
        recipe=dict(agent.recipe),
    )


async def new_run(agent: Agent[Any], request: RunRequest) -> RunState:
    """A fresh state; with a session, its stateful tools' states carry over.

    The session's last completed turn (stored, or kept in the process without a store) is
    also the history when none is given.
    """
    states: dict[str, Any] = {}
    history, session_id, store = request.message_history, request.session_id, request.store
    if session_id is not None and store is not None:
        latest = await store.latest_in_session(session_id)
        if latest is not None:
            stored = await store.load(latest)
            states = session_tool_states(stored, agent.toolbox.registry)
            if not history:
                history = messages_from_json(stored.messages)
    elif session_id is not None:
        kept = kept_sessions(agent).get(session_id)
        if kept is not None:
            states = copy.deepcopy(kept.tool_states)  # a failed turn leaves them as kept
            history = history or kept.messages
    text, media = split_prompt(request.prompt)
    state = new_state(
        agent, text, message_history=history, run_id=request.run_id, session_id=session_id
    )
    state.attachments = tuple(media)
    state.tool_states.update(states)
    output = request.output
    state.output_schema = output.json_schema if output is not None else None
    state.external_tools = tuple(t.model_dump(mode="json") for t in request.external_tools)
    return state


async def run_context(
    agent: Agent[Any],
    state: RunState,
    deps: Any,
    sink: EventSink | None = None,
    stream: bool = False,
    output: OutputSpec | None = None,
    tap: RunTap | None = None,
    store: Store | None = None,
    resumed: Resumed | None = None,
) -> RunContext:
    """The live pieces of one run of ``agent`` on ``state``, bound to its MCP servers.

    A restored ``state`` keeps the output type it was started with (see `restored_output`).
    """
    toolbox = agent.toolbox
    registry, executor = await toolbox.current()
    inputs: InputHold | None = None
    built: list[RunContext] = []  # the source below reports to the context built last
    binding = toolbox.mcp.bindings.get(state.run_id) if toolbox.mcp else None
    if binding is None and not state.external_tools:
        tools = toolbox.static_tools(registry, executor)
    else:
        tools = RunTools(registry, executor)
    if binding is not None:

        async def source() -> tuple[ToolRegistry, ToolExecutor]:
            binding.attach(built[0].bus.emit_now)  # after RunStarted: the first round asks
            return await toolbox.current()

        def add_usage(usage: Usage) -> None:
            state.usage = state.usage + usage

        tools.source, binding.add_usage = source, add_usage
        if binding.elicit is None:
            from ponder.mcp.elicitation import InputHold  # runs with MCP servers only

            inputs = binding.hold = InputHold()
    ctx = build_context(
        config=agent.config,
        model=agent.model,
        hooks=agent.hooks,
        state=state,
        tools=tools,
        instructions=agent.instructions,
        deps=deps,
        sink=sink,
        stream=stream,
        output=restored_output(output, state.output_schema),
        tap=tap,
        store=store,
        inputs=inputs,
        resumed=resumed,
    )
    built.append(ctx)
    return ctx


def context_builder(
    agent: Agent[Any],
    deps: Any,
    sink: EventSink | None = None,
    output: OutputSpec | None = None,
    store: Store | None = None,
) -> ContextBuilder:
    """How the driver builds a resumed run's context once its state is restored.

    The resumed run is logged and traced like a new one (see `run_tap`).
    """

    async def build(state: RunState, resumed: Resumed) -> RunContext:
        streams, tap = sink is not None, run_tap(agent, resumed=True)
        return await run_context(agent, state, deps, sink, streams, output, tap, store, resumed)

    return build


def run_tap(agent: Agent[Any], *, resumed: bool = False) -> RunTap | None:
    """What logs, traces, records or replays a run of ``agent`` (None for most runs).

    A ``resumed`` run is logged and traced only (a cassette holds a whole run).
    """
    return run_taps(
        agent.model,
        record=agent.record,
        record_tools_spec=agent.record_tools_spec,
        instrument=agent.instrument,
        resumed=resumed,
    )
