"""Agents as tools: a call runs the other agent as a run of its own, nested in the caller's.

``other.as_tool(name, description)`` (or an `Agent` given in ``tools=``) is a tool taking a
``task``. Each call is a child run with its own ledger, limits and events; its id is
``<parent run>.<call id>``, its events reach the parent's stream as `SubAgentEvent`s
(nested under that call), and its usage and cost are added to the parent's. With a store the child
is checkpointed to the parent's store, so a parent resumed after a crash resumes the child
where it stopped (the call is idempotent: a finished child returns its stored result).
A child that suspends (for approval, or on an MCP server's question) leaves its call
unanswered (`is_held`), so the parent suspends on it, the child's suspension shown in the
call's ``sub_agent`` entry; the parent's decision for the call is checked against it and
handed on to the child when both are resumed.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

from ponder.agent.launch import RunRequest, context_builder, new_run, run_context, run_tap
from ponder.agent.run.context import RunContext
from ponder.agent.run.driver import resume_run, start_run
from ponder.agent.run.link import is_held
from ponder.cost import sum_cost
from ponder.events import Event, SubAgentEvent, event_to_dict
from ponder.exceptions import StoreError, UserError
from ponder.tools.tool import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from ponder.agent.agent import Agent
    from ponder.agent.limits import UsageLimits

__all__ = ["agent_tool", "check_no_cycle", "is_held"]


_CHAIN: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar(
    "ponder_agent_chain", default=()
)

_PARAMETERS = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "What the agent should do."}},
    "required": ["task"],
    "additionalProperties": False,
}


def agent_tool(
    agent: Agent[Any],
    name: str,
    description: str,
    *,
    limits: UsageLimits | None = None,
    timeout: float = 600.0,
) -> Tool:
    """The tool that runs ``agent`` on the calling model's ``task``."""

    async def call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        parent: RunContext | None = ctx.run
        chain = _CHAIN.get()
        if id(agent) in chain:
            raise UserError(
                f"tools: sub-agent {name!r} is already running above this call (a cycle)"
            )
        token = _CHAIN.set((*chain, id(agent)))
        try:
            result = await _run_child(agent, name, parent, ctx, str(args["task"]), limits)
        finally:
            _CHAIN.reset(token)
        if parent is not None:
            parent.state.usage = parent.state.usage + result.usage
            parent.state.cost = sum_cost(parent.state.cost, result.cost)
        data = {"run_id": result.run_id, "status": result.status, "stop_reason": result.stop_reason}
        if result.status == "suspended":
            held = {**data, "held": True, "suspension": result.suspension}
            return ToolResult.fail(f"sub-agent {name!r} waits", data=held)
        return ToolResult.ok(result.text, data=data)

    return Tool(
        name=name,
        description=description,
        parameters=_PARAMETERS,
        function=call,
        timeout=timeout,
        idempotent=True,  # a re-run resumes the stored child
        metadata={"agent": agent, "limits": limits},
    )


async def _run_child(
    agent: Agent[Any],
    name: str,
    parent: RunContext | None,
    call: ToolContext,
    task: str,
    limits: UsageLimits | None,
) -> Any:
    child_id = f"{call.run_id}.{call.call_id}"
    store = parent.checkpointer.store if parent and parent.checkpointer else None
    sink = _nested(parent, call.call_id, name)
    output = agent._output
    with agent.toolbox.bind(child_id, agent.model):
        if store is not None and await _stored(store, child_id):
            build = context_builder(agent, call.deps, sink, output, store)
            decision = _decision_for(parent, call.call_id)
            strategy = agent.strategy_type
            return await resume_run(build, strategy, agent.program, store, child_id, decision)
        request = RunRequest(task, output, run_id=child_id, store=store)
        state = await new_run(agent, request)
        state.limits = limits
        sinks = sink is not None
        tap = run_tap(agent)  # logged, traced, recorded as the child agent's options say
        ctx = await run_context(agent, state, call.deps, sink, sinks, output, tap, store)
        return await start_run(ctx, agent.strategy_type, agent.program, store)


def _decision_for(parent: RunContext | None, call_id: str) -> Any:
    """The parent's resume decision as it concerns this call (a mapping holds it per call)."""
    decision = parent.decision if parent is not None else None
    return decision.get(call_id) if isinstance(decision, dict) else decision


def _nested(parent: RunContext | None, call_id: str, name: str) -> Any:
    if parent is None or not parent.streams:
        return None

    def deliver(event: Event) -> None:
        data = event_to_dict(event)
        parent.bus.emit_now(SubAgentEvent(call_id=call_id, agent=name, event=data))

    return deliver


async def _stored(store: Any, run_id: str) -> bool:
    try:
        await store.load(run_id)
    except StoreError:
        return False
    return True


def check_no_cycle(agent: Agent[Any], tools: list[Tool]) -> None:
    """`UserError` naming ``tools`` when the sub-agents reachable from them form a cycle."""
    done: set[int] = set()

    def visit(node: Any, path: tuple[int, ...]) -> None:
        if id(node) in path:
            raise UserError(f"tools: the sub-agents of {agent!r} form a cycle")
        if id(node) in done:
            return
        for tool in node.toolbox.base:
            child = tool.metadata.get("agent")
            if child is not None:
                visit(child, (*path, id(node)))
        done.add(id(node))

    for tool in tools:
        child = tool.metadata.get("agent")
        if child is not None:
            visit(child, (id(agent),))
