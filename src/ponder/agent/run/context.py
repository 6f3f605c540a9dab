"""`RunContext`: the live, non-serialisable side of one run, as a frozen record.

It holds references to what strategies and the run machinery need besides ``RunState``,
each part with one job: the `EventBus` delivers events, the `ModelCaller` sends model
requests and accounts for them, `RunTools` is the tool set of the moment (MCP servers'
lists change during a run), the checkpointer writes to the store, `Resumed` carries what
a resume brought. ``ponder.agent.run.build.build_context`` makes it once, when the run's
state is known (the driver asks for it only after a resumed run's state is restored);
nothing patches it afterwards.
Nodes reach it through `RunDeps` (``ponder.agent.run.deps``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ponder.agent.hooks import Hooks
from ponder.agent.output import OutputSpec
from ponder.agent.run.bus import EventBus, EventSink
from ponder.agent.run.caller import ModelCaller
from ponder.agent.run.state import RunState
from ponder.config import AgentConfig
from ponder.messages import UserMessage
from ponder.models.base import Model, OutputSchema
from ponder.tools.executor import ToolExecutor
from ponder.tools.external import external_tools
from ponder.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from ponder.agent.run.checkpointer import Checkpointer
    from ponder.mcp.elicitation import InputHold
    from ponder.observability.tap import RunTap

__all__ = [
    "NOTHING",
    "ContextBuilder",
    "EventSink",
    "Resumed",
    "RunContext",
    "RunTools",
    "ToolSource",
]

ToolSource = Callable[[], Awaitable[tuple[ToolRegistry, ToolExecutor]]]


class RunTools:
    """The tools a run offers now, and the executor that runs them.

    ``source`` gives the current set (MCP servers' lists change during a run); the run's
    external tools (``RunState.external_tools``) are offered besides the agent's.
    """

    __slots__ = ("_own", "executor", "registry", "source")

    def __init__(
        self, registry: ToolRegistry, executor: ToolExecutor, source: ToolSource | None = None
    ) -> None:
        self.registry = registry
        self.executor = executor
        self.source = source
        self._own: ToolRegistry | None = None

    async def refresh(self, state: RunState) -> bool:
        """Take up the current tool set between rounds; True when it changed."""
        if self.source is None:
            return False
        registry, executor = await self.source()
        if registry is self._own:
            return False
        self.registry, self.executor = registry, executor
        self.add_external(state)
        return True

    def add_external(self, state: RunState) -> None:
        """Offer ``state``'s external tools besides the agent's."""
        self._own = self.registry
        if state.external_tools:
            self.registry = self.registry.merged(external_tools(state.external_tools))


NOTHING: AbstractSet[str] = frozenset()


@dataclass(slots=True)
class Resumed:
    """What a resume brought, taken up once by the run's next steps.

    Only a context that may be resumed has one (a fresh local run has None: one object
    fewer for the collector in each waiting run).
    """

    decision: Any = None
    """The approval decision a suspended run was resumed with (see ``run.approval``)."""
    interrupted: AbstractSet[str] = NOTHING
    """Calls that were running when the run stopped."""


@dataclass(frozen=True, slots=True, eq=False)
class RunContext:
    """The live side of one run: what strategies and the run machinery use besides its state."""

    config: AgentConfig
    state: RunState
    hooks: Hooks
    bus: EventBus
    caller: ModelCaller
    toolset: RunTools
    instructions: str = ""
    deps: Any = None
    output: OutputSpec | None = None
    """The type the final answer must have (None: plain text); see ``final_output``."""
    tap: RunTap | None = None
    """What records, replays or traces the run; None for most runs."""
    checkpointer: Checkpointer | None = None
    """The link to the run's store; None without one."""
    inputs: InputHold | None = None
    """The MCP servers' questions held for this run, and its answers (``run.elicitation``)."""
    streams: bool = False
    """Whether the run's events go to a stream (sub-agents' events are nested into it)."""
    resumed: Resumed | None = None
    """What the run was resumed with; None for a run that is not resumed."""

    @property
    def model(self) -> Model:
        """The run's model (wrapped by its tap, if it has one)."""
        return self.caller.model

    @property
    def clock(self) -> Callable[[], float]:
        """Stamps event times; a durable engine gives its deterministic clock."""
        return self.bus.clock

    @property
    def tools(self) -> ToolRegistry:
        """The tools the run offers now."""
        return self.toolset.registry

    @property
    def executor(self) -> ToolExecutor:
        """The executor of the tools the run offers now."""
        return self.toolset.executor

    @property
    def decision(self) -> Any:
        """The approval decision the run was resumed with (None: none, or not resumed)."""
        return self.resumed.decision if self.resumed is not None else None

    @property
    def interrupted(self) -> AbstractSet[str]:
        """Calls that were running when the run stopped (empty unless resumed)."""
        return self.resumed.interrupted if self.resumed is not None else NOTHING

    @property
    def purpose(self) -> str:
        """The purpose of the latest model request."""
        return self.caller.purpose

    @property
    def answer_schema(self) -> OutputSchema | None:
        """What a request for the final answer with tools off asks for."""
        return self.caller.answer_schema

    def append_user(self, content: str) -> None:
        """Append a runtime-injected user message to the ledger."""
        self.state.ledger.append(UserMessage(content=content))

    def close(self) -> None:
        """Drop the run's reference cycles (the checkpointer's VM, the bus's subscribers)."""
        if self.checkpointer is not None:
            self.checkpointer.vm = None  # the VM's ``after`` hook is the checkpointer's
        self.bus.close()


ContextBuilder = Callable[[RunState, Resumed], Awaitable[RunContext]]
"""Builds a resumed run's context once its state is restored."""
