"""Sub-agents on Temporal: each call of one is a child workflow of the caller's run.

A child is a run like any other (``ponder.run`` on the worker's agent named
``<caller>/<tool>``), so its finished steps are in its own history and never run again,
whatever worker is lost. The caller's side is `SubRuns`:

- a child runs with the limits its tool was given (``as_tool(limits=...)``), as locally;
- a finished child's usage is added to the caller's, and its events reach the caller's
  stream as `SubAgentEvent`s under that call, all at once when the child ends (they travel
  in its result; a local child's arrive as they happen). Follow the child's own workflow
  (``<run>.<call id>``) to see them live;
- a child that waits for a decision tells its parent (the ``child_waits`` Signal), so the
  parent shows as suspended on the child's own pending calls, and the parent's decision
  (its ``decide`` Update or ``decide_later`` Signal) is handed to that child. A grandchild
  is handed on the same way, one level at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

from ponder.agent.run.context import RunContext
from ponder.events import SubAgentEvent
from ponder.messages import ToolCallPart
from ponder.models.base import Usage
from ponder.tools.executor import ToolOutcome
from ponder.tools.tool import Tool, ToolResult

__all__ = ["RUN_WORKFLOW", "SubRuns", "run_child"]

RUN_WORKFLOW = "ponder.run"
"""The workflow type of a ponder run (and of a sub-agent's run, as its child)."""


async def run_child(
    call: ToolCallPart,
    tool: Tool,
    run_id: str,
    heartbeat_timeout: float,
    on_child: Callable[[ToolCallPart, dict[str, Any]], None] | None,
    *,
    history_budget: dict[str, Any] | None = None,
    traceparent: str | None = None,
) -> ToolOutcome:
    """Run a sub-agent's call as a child workflow (id ``<run>.<call id>``); its outcome.

    ``history_budget`` (run input) is the child's, when the caller's run was given one;
    ``traceparent``: the span the child's run span goes under, when the caller is traced.
    """
    task = (call.args or {}).get("task")
    if not isinstance(task, str):
        return _failed(call, f"tool {call.name!r} needs a 'task' string: {call.arguments}")
    child_id = f"{run_id}.{call.id}"
    data = {
        "prompt": task,
        "run_id": child_id,
        "agent": tool.metadata["sub_agent"],
        "heartbeat_timeout": heartbeat_timeout,
    }
    if history_budget is not None:
        data["history_budget"] = history_budget
    if traceparent is not None:
        data["traceparent"] = traceparent
    if tool.metadata.get("limits"):
        data["limits"] = tool.metadata["limits"]  # the child's own limits, as locally
    try:
        raw: dict[str, Any] = await workflow.execute_child_workflow(RUN_WORKFLOW, data, id=child_id)
    except ChildWorkflowError as error:
        cause = error.cause if error.cause is not None else error
        return _failed(call, f"sub-agent {call.name!r} failed: {cause}")
    if on_child is not None:
        on_child(call, raw)
    found = {"run_id": child_id, "status": raw["status"], "stop_reason": raw["stop_reason"]}
    result = ToolResult.ok(raw.get("output") or "", data=found)
    return ToolOutcome(call, result, "ok", 0.0, result.to_message(call))


def _failed(call: ToolCallPart, message: str) -> ToolOutcome:
    result = ToolResult.fail(message)
    return ToolOutcome(call, result, "error", 0.0, result.to_message(call))


class SubRuns:
    """One run's children that wait for a decision, and the way to its own parent."""

    def __init__(self) -> None:
        self.waiting: dict[str, dict[str, Any]] = {}
        """Child workflow id → what it waits for (``reason``, ``payload``), oldest first."""
        self.ctx: RunContext | None = None

    @property
    def parent_id(self) -> str | None:
        """The parent run's workflow id, for a sub-agent's run."""
        parent = workflow.info().parent
        return None if parent is None else parent.workflow_id

    def finished(self, call: ToolCallPart, raw: dict[str, Any]) -> None:
        """Roll a finished child up into the run: its usage, then its events."""
        ctx = self.ctx
        if ctx is None:
            return
        try:
            usage = Usage.model_validate(raw.get("usage") or {})
        except ValueError:
            usage = Usage()
        ctx.state.usage = ctx.state.usage + usage
        agent = call.name
        for event in raw.get("events") or ():
            if isinstance(event, dict):
                ctx.bus.emit_now(SubAgentEvent(call_id=call.id, agent=agent, event=event))

    def note(self, data: Any) -> bool:
        """Take a ``child_waits`` Signal; True when what the run waits for changed."""
        if not isinstance(data, dict) or not isinstance(data.get("child"), str):
            return False
        child, suspension = data["child"], data.get("suspension")
        if isinstance(suspension, dict):
            self.waiting[child] = suspension
            return True
        return self.waiting.pop(child, None) is not None

    def first(self) -> dict[str, Any] | None:
        """What the oldest waiting child waits for."""
        return next(iter(self.waiting.values()), None)

    async def hand_on(self, value: Any) -> None:
        """Give the oldest waiting child the decision ``value``."""
        child = next(iter(self.waiting))
        del self.waiting[child]
        await workflow.get_external_workflow_handle(child).signal("decide_later", value)

    async def tell_parent(self, suspension: dict[str, Any] | None) -> None:
        """Tell the parent run (if any) what this run now waits for (None: nothing)."""
        parent = self.parent_id
        if parent is None:
            return
        data = {"child": workflow.info().workflow_id, "suspension": suspension}
        await workflow.get_external_workflow_handle(parent).signal("child_waits", data)
