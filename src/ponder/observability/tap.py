"""Taps: what watches one run from outside its strategy — logging, recording, replay, tracing.

A `RunTap` may wrap the run's model (`RunTap.wrap_model`) while the run's context is
built, is attached to the run (a `TappedRun`: the run's context) before it starts, sees
every event the moment it is emitted, runs around each tool call (and may answer a call
itself), sees each VM node before it runs, and is told when the run is over.
`ponder.observability.run_taps` builds a run's taps from the agent's
``record``/``instrument`` options and its model; a run without any pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ponder.config import AgentConfig
from ponder.events import Event
from ponder.messages import ToolCallPart
from ponder.models.base import Model
from ponder.tools.executor import ToolRun, ToolStatus
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool, ToolResult
from ponder.vm import Interpreter

__all__ = ["RunTap", "TappedRun", "Taps", "combine_taps"]


class TappedRun(Protocol):
    """What a tap sees of the run it watches (the run's ``RunContext`` is one).

    Taps depend on this view, not on the run machinery: observers sit below the agent.
    """

    @property
    def model(self) -> Model:
        """The run's model (as the taps wrapped it)."""

    @property
    def config(self) -> AgentConfig:
        """The run's configuration."""

    @property
    def state(self) -> Any:
        """The run's ``RunState`` (``run_id``, ``session_id``, ``ledger``, ``usage``, ...)."""

    @property
    def instructions(self) -> str:
        """The agent's instructions (its system prompt's text)."""

    @property
    def tools(self) -> ToolRegistry:
        """The tools the run offers."""

    @property
    def purpose(self) -> str:
        """The purpose of the latest model request."""


class RunTap:
    """One observer of a run; every method does nothing unless overridden.

    ``wants_nodes = False`` spares the VM from calling `node` (its fast loop runs then).
    """

    wants_nodes = True

    def wrap_model(self, model: Model) -> Model:
        """The model the run will use instead of ``model`` (to see each request)."""
        return model

    def attach(self, ctx: TappedRun) -> None:
        """The run is about to start on ``ctx``."""

    def event(self, event: Event) -> None:
        """``event`` was just emitted (stamped, in emission order)."""

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, run: ToolRun
    ) -> tuple[ToolResult, ToolStatus]:
        """Run ``call`` through ``run()``, or answer it without running it."""
        return await run()

    def node(self, vm: Interpreter, pc: int) -> None:
        """The VM is about to run the node at ``pc``."""

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """The run is over (``error`` says how it failed, if it did)."""


class Taps(RunTap):
    """Several taps as one: each sees everything, in order; tool calls nest."""

    def __init__(self, taps: Sequence[RunTap]) -> None:
        self.taps = tuple(taps)
        self.wants_nodes = any(t.wants_nodes for t in self.taps)

    def wrap_model(self, model: Model) -> Model:
        """``model`` wrapped by every tap in turn (the last one outermost)."""
        for tap in self.taps:
            model = tap.wrap_model(model)
        return model

    def attach(self, ctx: TappedRun) -> None:
        """Attach every tap."""
        for tap in self.taps:
            tap.attach(ctx)

    def event(self, event: Event) -> None:
        """Give ``event`` to every tap."""
        for tap in self.taps:
            tap.event(event)

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, run: ToolRun
    ) -> tuple[ToolResult, ToolStatus]:
        """Run the call through every tap, the first outermost."""
        for tap in reversed(self.taps[1:]):
            run = _nested(tap, call, tool, run)
        return await self.taps[0].tool(call, tool, run)

    def node(self, vm: Interpreter, pc: int) -> None:
        """Tell every tap that wants to know."""
        for tap in self.taps:
            if tap.wants_nodes:
                tap.node(vm, pc)

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """Finish every tap; the first complaint is raised."""
        raised: BaseException | None = None
        for tap in self.taps:
            try:
                tap.finish(ctx, error)
            except Exception as exc:  # every tap finishes; the first complaint is raised
                raised = raised or exc
        if raised is not None:
            raise raised


def _nested(tap: RunTap, call: ToolCallPart, tool: Tool | None, inner: ToolRun) -> ToolRun:
    async def run() -> tuple[ToolResult, ToolStatus]:
        return await tap.tool(call, tool, inner)

    return run


def combine_taps(*taps: RunTap | None) -> RunTap | None:
    """The given taps as one (None when there are none)."""
    found: list[Any] = [t for t in taps if t is not None]
    if not found:
        return None
    return found[0] if len(found) == 1 else Taps(found)
