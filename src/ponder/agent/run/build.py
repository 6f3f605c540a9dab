"""`build_context`: one run's `RunContext`, its parts built and wired once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ponder.agent.hooks import Hooks
from ponder.agent.output import OutputSpec
from ponder.agent.run.bus import EventBus, EventSink
from ponder.agent.run.caller import ModelCaller
from ponder.agent.run.checkpointer import Checkpointer
from ponder.agent.run.context import Resumed, RunContext, RunTools
from ponder.agent.run.state import RunState
from ponder.config import AgentConfig
from ponder.models.base import Model
from ponder.store.base import Store

if TYPE_CHECKING:
    from ponder.mcp.elicitation import InputHold
    from ponder.observability.tap import RunTap

__all__ = ["build_context"]


def build_context(
    *,
    config: AgentConfig,
    model: Model,
    hooks: Hooks,
    state: RunState,
    tools: RunTools,
    instructions: str = "",
    deps: Any = None,
    sink: EventSink | None = None,
    stream: bool = False,
    output: OutputSpec | None = None,
    tap: RunTap | None = None,
    store: Store | None = None,
    inputs: InputHold | None = None,
    clock: Callable[[], float] = time.time,
    resumed: Resumed | None = None,
) -> RunContext:
    """The context of one run on ``state``: its parts built and wired, the tap attached.

    Events go to ``sink``, then to the store's log (with a ``store``), then to the tap; the
    tap may wrap the model first. Text streams as events only with ``stream`` and a sink.
    """
    if tap is not None:
        model = tap.wrap_model(model)
    bus = EventBus(state, hooks, clock, (sink,) if sink is not None else ())
    checkpointer = Checkpointer(store, state, bus) if store is not None else None
    if checkpointer is not None:
        bus.subscribe(checkpointer.note)
    if tap is not None:
        bus.subscribe(tap.event)
    caller = ModelCaller(
        config, model, hooks, state, bus, output=output, stream_text=stream and sink is not None
    )
    tools.add_external(state)
    ctx = RunContext(
        config=config,
        state=state,
        hooks=hooks,
        bus=bus,
        caller=caller,
        toolset=tools,
        instructions=instructions,
        deps=deps,
        output=output,
        tap=tap,
        checkpointer=checkpointer,
        inputs=inputs,
        streams=sink is not None,
        resumed=resumed,
    )
    if tap is not None:
        tap.attach(ctx)
    return ctx
