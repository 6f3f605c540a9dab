"""`Agent`: configuration, and the entry points that run it (`run`, `stream`).

`resume` and the synchronous forms are in `ponder.agent.sync_api`.

An agent holds configuration only — model, tools, instructions, config, hooks, and the
pooled MCP sessions. Every run gets its own `RunState` (plain data) and `RunContext`
(the live pieces), so any number of runs can share one agent concurrently; `launch`
starts them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ponder.agent.hooks import Hooks
from ponder.agent.result import OutputT, RunResult
from ponder.agent.sync_api import EntryPoints
from ponder.exceptions import UserError
from ponder.observability.instrumentation import Instrumentation, resolve_instrumentation

if TYPE_CHECKING:
    from ponder.agent.launch import Prompt
    from ponder.agent.limits import UsageLimits
    from ponder.agent.output import OutputSpec
    from ponder.agent.run.state import RunState
    from ponder.agent.strategies.base import AgentStrategy
    from ponder.agent.stream import RunStream
    from ponder.config import AgentConfig
    from ponder.messages import Message
    from ponder.models.base import Model
    from ponder.store.base import Store
    from ponder.tools.definition import ToolDefinition
    from ponder.tools.registry import ToolRegistry
    from ponder.tools.tool import Tool
    from ponder.vm import Program

__all__ = ["Agent", "Prompt"]

T = TypeVar("T")


def __getattr__(name: str) -> Any:
    if name == "Prompt":
        from ponder.agent.launch import Prompt

        return Prompt
    raise AttributeError(f"module 'ponder.agent.agent' has no attribute {name!r}")


class Agent(EntryPoints[OutputT], Generic[OutputT]):
    """An agent: a model, tools and instructions, run by ponder's workflow VM.

    With an ``output_type`` (a pydantic model, dataclass, TypedDict or scalar type) every
    run's answer is validated into it: ``result.output`` is of that type.
    """

    def __init__(
        self,
        model: str | Model | Sequence[str | Model] | None = None,
        tools: Sequence[Tool | Callable[..., Any] | Agent[Any]] = (),
        instructions: str = "",
        config: AgentConfig | None = None,
        *,
        output_type: type[OutputT] | None = None,
        strategy: type[AgentStrategy] | None = None,
        store: Store | None = None,
        record: str | os.PathLike[str] | None = None,
        instrument: bool | Instrumentation | None = None,
        **config_overrides: Any,
    ) -> None:
        import ponder.agent.defaults as made  # and with it the runtime, on the first agent

        self.config = made.agent_config(config, config_overrides, model)
        self._given = (model, tuple(tools), instructions, strategy)
        self.instructions = instructions or self.config.instructions
        self.output_type = output_type
        self._output = made.output_spec(output_type)
        self.store = store
        self.record = record
        """Each run's cassette is written here (see ``ponder.replay``); None: not recorded."""
        self.record_tools_spec: str | None = None
        """How to load this agent's tools again (``module:attribute``), kept in cassettes."""
        self.instrument = instrument
        """Trace runs with OpenTelemetry: True, an `Instrumentation`, False; None: as
        ``ponder.instrument()`` says."""
        resolve_instrumentation(instrument)  # a missing OpenTelemetry is reported now
        self.hooks = Hooks()
        self.on_event = self.hooks.on_event
        self.on_precompletion = self.hooks.on_precompletion
        self.on_completion = self.hooks.on_completion
        self._model_spec = model if model is not None else self.config.model
        self._model: Model | None = None
        own = [t.as_tool() if isinstance(t, Agent) else t for t in tools]
        self.toolbox = made.toolbox_for(self, self.config, own)
        self.on_elicitation = self.toolbox.on_elicitation
        self._strategy = strategy or made.default_strategy(self.config)
        made.check_strategy(self._strategy, self.config)  # one that cannot run is refused now
        made.warn_unoffered_tools(self._strategy, self.config, self.toolbox)
        self.recipe: dict[str, Any] = made.default_recipe(self._model_spec, self.config)
        """How this agent was built, stored with each run (the CLI adds its options).

        ``model``, ``workflow``, ``mcp_servers``; from the CLI also ``config`` (a path),
        ``tools`` (``module:attr`` references), ``instructions`` and ``rag``.
        """

    def with_config(self, config: AgentConfig) -> Agent:
        """A new agent like this one with ``config``: the same tools, hooks and handlers.

        What came from the old config (model string, instructions, strategy) follows the new
        one; what was passed explicitly (a model, instructions, a strategy) is kept.
        """
        model, tools, instructions, strategy = self._given
        agent = Agent(model, tools, instructions, config, strategy=strategy, store=self.store)
        agent.hooks = self.hooks
        agent.on_event, agent.on_precompletion = self.hooks.on_event, self.hooks.on_precompletion
        agent.on_completion = self.hooks.on_completion
        agent.toolbox.elicitation = self.toolbox.elicitation
        return agent

    @property
    def model(self) -> Model:
        """The model, resolved from its string (or list: a `FallbackModel`) on first use."""
        if self._model is None:
            spec = self._model_spec
            if spec is None:
                raise UserError("no model given: pass model='openai:gpt-4o-mini' or set 'model'")
            from ponder.models.registry import resolve_configured

            self._model = resolve_configured(spec, self.config)
        return self._model

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        limits: UsageLimits | None = None,
    ) -> Tool:
        """The agent as a tool of another: each call runs it on a ``task`` (see `subagent`)."""
        from ponder.agent.limits import UsageLimits
        from ponder.agent.subagent import agent_tool

        chosen = name or "sub_agent"  # stable across processes: a resumed ledger names it
        about = description or self.instructions or f"Hand a task to the {chosen} agent."
        return agent_tool(self, chosen, about, limits=UsageLimits.of(limits))

    @property
    def strategy_type(self) -> type[AgentStrategy]:
        """The strategy class every run of this agent uses."""
        return self._strategy

    @property
    def program(self) -> Program:
        """The VM program this agent's workflow runs."""
        from ponder.agent.strategies.workflows import program_for

        return program_for(self._strategy)

    def tool_registry(self) -> ToolRegistry:
        """The tools offered to the model (as of the last run, for MCP servers' tools)."""
        return self.toolbox.registry

    def _spec(self, output_type: Any) -> OutputSpec | None:
        """A run's output spec: the agent's unless the run gives its own type."""
        if output_type is None:
            return self._output
        from ponder.agent.defaults import output_spec

        return output_spec(output_type)

    def new_state(
        self,
        prompt: str,
        *,
        message_history: Sequence[Message] = (),
        run_id: str | None = None,
        session_id: str | None = None,
    ) -> RunState:
        """A fresh run state for ``prompt`` after ``message_history``."""
        from ponder.agent.launch import new_state

        return new_state(
            self, prompt, message_history=message_history, run_id=run_id, session_id=session_id
        )

    @overload
    def run(
        self,
        prompt: Prompt,
        *,
        output_type: None = None,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> Coroutine[Any, Any, RunResult[OutputT]]: ...
    @overload
    def run(
        self,
        prompt: Prompt,
        *,
        output_type: type[T],
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> Coroutine[Any, Any, RunResult[T]]: ...
    def run(
        self,
        prompt: Prompt,
        *,
        output_type: Any = None,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> Coroutine[Any, Any, RunResult[Any]]:
        """Run the agent on ``prompt``; with a ``store``, checkpoint it as it goes.

        With a ``session_id``, the session's last completed turn is the conversation this
        one continues (unless ``message_history`` is given): from the store, or without one
        from this agent's memory of the process; turns of one session run one at a time. An
        ``output_type`` types this run's answer instead of the agent's; ``limits`` bound
        its requests, tokens and tool calls (it ends with an answer when one is reached).
        ``external_tools`` are offered too; a call to one suspends the run until the
        caller resumes it with the result (see ``ponder.tools.external``).
        """
        from ponder.agent.launch import RunRequest, launch, raising

        # the launch's own coroutine, not one awaiting it: a waiting run keeps one object
        # fewer; the request is not kept either (the launch lets go of it once under way)
        try:
            output = self._spec(output_type)
        except Exception as exc:  # raised when the run is awaited, as from a coroutine
            return raising(exc)
        return launch(
            self,
            RunRequest(
                prompt,
                output,
                message_history=message_history,
                deps=deps,
                run_id=run_id,
                session_id=session_id,
                store=store or self.store,
                limits=limits,
                external_tools=external_tools,
            ),
        )

    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        output_type: None = None,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> RunStream[OutputT]: ...
    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        output_type: type[T],
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> RunStream[T]: ...
    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        output_type: OutputSpec | None = None,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> RunStream[Any]: ...
    def stream(
        self,
        prompt: Prompt,
        *,
        output_type: Any = None,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
        limits: UsageLimits | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> RunStream[Any]:
        """Run the agent, yielding its events as they happen; ``.result`` at the end.

        A typed answer streams as `OutputPartial` events (the value parsed so far).
        """
        import uuid

        from ponder.agent.launch import RunRequest, launch
        from ponder.agent.stream import RunStream

        run_id = run_id or uuid.uuid4().hex
        request = RunRequest(
            prompt,
            self._spec(output_type),
            message_history=message_history,
            deps=deps,
            run_id=run_id,
            session_id=session_id,
            store=store or self.store,
            limits=limits,
            external_tools=external_tools,
        )
        return RunStream(lambda sink: launch(self, request, sink), run_id, request.store)

    async def aclose(self) -> None:
        """Release what the agent holds (MCP sessions)."""
        await self.toolbox.close()

    async def _close_owned(self) -> None:
        """Close the toolbox and the model this agent built from its model string."""
        from ponder.models.base import Model

        await self.aclose()
        close = getattr(self._model, "aclose", None)
        if not isinstance(self._model_spec, Model) and close is not None:
            await close()

    async def __aenter__(self) -> Agent[OutputT]:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
