"""`Agent`: configuration, and the entry points that run it (`run`, `stream`, `resume`).

An agent holds configuration only — model, tools, instructions, config, hooks, and the
pooled MCP sessions. Every run gets its own `RunState` (plain data) and `RunContext`
(the live pieces), so any number of runs can share one agent concurrently.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Generic, TypeAlias, TypeVar, overload

from ponder.agent.hooks import Hooks
from ponder.agent.limits import UsageLimits
from ponder.agent.output import OutputSpec
from ponder.agent.result import OutputT, RunResult
from ponder.agent.run.context import EventSink, RunContext
from ponder.agent.run.driver import resume_run, start_run
from ponder.agent.run.sessions import session_tool_states
from ponder.agent.run.state import RunState
from ponder.agent.run.tap import RunTap, combine_taps
from ponder.agent.run.workflows import program_for
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.chat import NoActionStrategy
from ponder.agent.strategies.react import ReActStrategy
from ponder.agent.stream import RunStream
from ponder.agent.subagent import agent_tool, check_no_cycle
from ponder.agent.sync import close_at_exit, iterate_sync, run_coroutine_sync
from ponder.agent.toolbox import Toolbox
from ponder.config import AgentConfig, ConfigWarning
from ponder.events import Event
from ponder.exceptions import UserError
from ponder.instrumentation import Instrumentation, resolve_instrumentation
from ponder.media import File, Image, split_prompt
from ponder.messages import Ledger, Message, messages_from_json
from ponder.models.base import Model, Usage
from ponder.store.base import Store
from ponder.tools.definition import ToolDefinition
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool
from ponder.vm import Program

__all__ = ["Agent", "Prompt"]

Prompt: TypeAlias = str | Sequence[str | Image | File]
"""A run's prompt: text, or text with images and files (``[text, Image(...), File(...)]``)."""

T = TypeVar("T")


def _output_spec(output_type: Any) -> OutputSpec | None:
    """The spec of ``output_type``; None for a plain text answer (no type, or ``str``)."""
    if isinstance(output_type, OutputSpec):
        return output_type
    return None if output_type is None or output_type is str else OutputSpec(output_type)


def _server_label(spec: str | dict[str, Any]) -> str:
    """An MCP server entry as the recipe records it: no environment, headers or secrets."""
    if isinstance(spec, str):
        return spec
    found = spec.get("name") or spec.get("url") or spec.get("command") or "server"
    return str(found)


class Agent(Generic[OutputT]):
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
        base = config or AgentConfig()
        self.config = base.replace(**config_overrides) if config_overrides else base
        self._given = (model, tuple(tools), instructions, strategy)
        self.instructions = instructions or self.config.instructions
        self.output_type = output_type
        self._output = _output_spec(output_type)
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
        self.toolbox = Toolbox(self.config, own)
        check_no_cycle(self, self.toolbox.base)
        self.on_elicitation = self.toolbox.on_elicitation
        self._executor: ToolExecutor | None = None
        self._strategy = strategy or self._default_strategy()
        program_for(self._strategy)  # a strategy the workflows cannot drive is refused now
        self._warn_unoffered_tools()
        self.recipe: dict[str, Any] = self._default_recipe()
        """How this agent was built, stored with each run (the CLI adds its options).

        ``model``, ``workflow``, ``mcp_servers``; from the CLI also ``config`` (a path),
        ``tools`` (``module:attr`` references), ``instructions`` and ``rag``.
        """

    def _default_recipe(self) -> dict[str, Any]:
        spec, config = self._model_spec, self.config
        scripts = config.agent_mcp_server_scripts if config.agent_mcp_client_enable else ()
        servers = [_server_label(spec) for spec in scripts]
        return {
            "model": spec if isinstance(spec, str) else getattr(spec, "name", None),
            "workflow": config.agent_workflow,
            "mcp_servers": servers,
        }

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

    def _warn_unoffered_tools(self) -> None:
        """RAG over an index offers no tools: say so when the agent has some."""
        if self._strategy.get_category() != "rag":
            return
        from ponder.agent.strategies.rag import RagStrategy

        strategy = self._strategy
        if not issubclass(strategy, RagStrategy) or not strategy.has_index(
            self.config.rag_index_path
        ):
            return
        names = [t.name for t in self.toolbox.base]
        if self.toolbox.mcp is not None:
            names.append("the MCP servers' tools")
        if names:
            warnings.warn(
                f"RAG mode answers from its index and offers no tools; not offered: "
                f"{', '.join(names)} (leave rag_index_path unset to retrieve with the tools)",
                ConfigWarning,
                stacklevel=3,
            )

    def _default_strategy(self) -> type[AgentStrategy]:
        config = self.config
        if config.agent_strategy == "hybrid-react":
            warnings.warn(
                "agent_strategy 'hybrid-react' is deprecated; running 'react'. Use "
                "agent_workflow = 'step-react' for structured reasoning.",
                DeprecationWarning,
                stacklevel=3,
            )
        if config.agent_strategy == "no-action" or config.tool_calling_mode == "none":
            return NoActionStrategy
        if config.tool_calling_mode == "rag":
            from ponder.agent.strategies.rag import RagStrategy

            return RagStrategy
        if config.agent_workflow == "step-react":
            from ponder.agent.strategies.step_react.strategy import StepReActStrategy

            return StepReActStrategy
        return ReActStrategy

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
        return program_for(self._strategy)

    def tool_registry(self) -> ToolRegistry:
        """The tools offered to the model (as of the last run, for MCP servers' tools)."""
        return self.toolbox.registry

    def _spec(self, output_type: Any) -> OutputSpec | None:
        """A run's output spec: the agent's unless the run gives its own type."""
        return self._output if output_type is None else _output_spec(output_type)

    def _run_tap(self) -> RunTap | None:
        """What logs, traces, records or replays a new run (None for most runs)."""
        from ponder.logs import log_tap

        recorder: RunTap | None = None
        if self.record is not None:
            from ponder.replay.record import Recorder

            recorder = Recorder(self.record, tools_spec=self.record_tools_spec)
        make_tap = getattr(self.model, "run_tap", None)
        replay: RunTap | None = make_tap() if callable(make_tap) else None
        tracer: RunTap | None = None
        tracing = resolve_instrumentation(self.instrument)
        if tracing is not None:
            from ponder.otel import OtelTap

            tracer = OtelTap(tracing)
        return combine_taps(
            log_tap(), tracer, recorder, replay
        )  # the recorder sees what the replay answers

    async def _context(
        self,
        state: RunState,
        deps: Any,
        sink: EventSink | None = None,
        stream: bool = False,
        output: OutputSpec | None = None,
        tap: RunTap | None = None,
    ) -> RunContext:
        registry, executor = await self._tools_now()
        ctx = RunContext(
            config=self.config, model=self.model, tools=registry, executor=executor,
            hooks=self.hooks, state=state, instructions=self.instructions, deps=deps,
            sink=sink, stream_text=stream, output=output, tap=tap,
        )  # fmt: skip
        if tap is not None:
            tap.attach(ctx)
        binding = self.toolbox.mcp.bindings.get(state.run_id) if self.toolbox.mcp else None
        if binding is not None:

            async def source() -> tuple[ToolRegistry, ToolExecutor]:
                binding.attach(ctx.emit_now)  # after RunStarted: the first round asks
                return await self._tools_now()

            def add_usage(usage: Usage) -> None:
                ctx.state.usage = ctx.state.usage + usage

            ctx.tool_source, binding.add_usage = source, add_usage
            if binding.elicit is None:
                from ponder.agent.run.elicitation import InputHold

                ctx.inputs = binding.hold = InputHold()
        return ctx

    async def _tools_now(self) -> tuple[ToolRegistry, ToolExecutor]:
        registry = await self.toolbox.refresh()
        executor = self._executor
        if executor is None or executor.registry is not registry:
            # one executor per tool set: per-tool concurrency limits hold across runs
            executor = self._executor = ToolExecutor(
                registry,
                default_timeout=self.config.tool_timeout,
                max_output_chars=self.config.tool_output_max_chars,
            )
        return registry, executor

    def new_state(
        self,
        prompt: str,
        *,
        message_history: Sequence[Message] = (),
        run_id: str | None = None,
        session_id: str | None = None,
    ) -> RunState:
        """A fresh run state for ``prompt`` after ``message_history``."""
        return RunState(
            run_id=run_id or uuid.uuid4().hex,
            session_id=session_id,
            prompt=prompt,
            ledger=Ledger(message_history),
            recipe=dict(self.recipe),
        )

    async def _new_run(
        self,
        prompt: Prompt,
        history: Sequence[Message],
        run_id: str | None,
        session_id: str | None,
        store: Store | None,
        output: OutputSpec | None = None,
        external_tools: Sequence[ToolDefinition] = (),
    ) -> RunState:
        """A fresh state; with a stored session, its stateful tools' states carry over.

        The session's last completed turn is also the history when none is given.
        """
        states: dict[str, Any] = {}
        if session_id is not None and store is not None:
            latest = await store.latest_in_session(session_id)
            if latest is not None:
                stored = await store.load(latest)
                states = session_tool_states(stored, self.toolbox.registry)
                if not history:
                    history = messages_from_json(stored.messages)
        text, media = split_prompt(prompt)
        state = self.new_state(text, message_history=history, run_id=run_id, session_id=session_id)
        state.attachments = media
        state.tool_states.update(states)
        state.output_schema = output.json_schema if output is not None else None
        state.external_tools = [t.model_dump(mode="json") for t in external_tools]
        return state

    @overload
    async def run(
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
    ) -> RunResult[OutputT]: ...
    @overload
    async def run(
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
    ) -> RunResult[T]: ...
    async def run(
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
    ) -> RunResult[Any]:
        """Run the agent on ``prompt``; with a ``store``, checkpoint it as it goes.

        With a ``session_id`` and a store, the session's last completed turn is the
        conversation this one continues (unless ``message_history`` is given). An
        ``output_type`` types this run's answer instead of the agent's; ``limits`` bound
        its requests, tokens and tool calls (it ends with an answer when one is reached).
        ``external_tools`` are offered too; a call to one suspends the run until the
        caller resumes it with the result (see ``ponder.tools.external``).
        """
        store = store or self.store
        output = self._spec(output_type)
        state = await self._new_run(
            prompt, message_history, run_id, session_id, store, output, external_tools
        )
        state.limits = UsageLimits.of(limits)
        with self.toolbox.bind(state.run_id, self.model):
            ctx = await self._context(state, deps, output=output, tap=self._run_tap())
            return await start_run(ctx, self._strategy, self.program, store)

    def run_sync(self, prompt: Prompt, **options: Any) -> RunResult[Any]:
        """`run` for code without an event loop (raises `UserError` inside a running one).

        Calls on one thread share one event loop, so the model's client and MCP sessions
        stay usable from call to call.
        """
        close_at_exit(self._close_owned)
        return run_coroutine_sync(self.run(prompt, **options))

    def stream_sync(self, prompt: Prompt, **options: Any) -> Iterator[Event]:
        """`stream` for scripts: the run's events as a plain iterator.

        Leaving the loop early cancels the run, as with `stream`.
        """
        close_at_exit(self._close_owned)
        return iterate_sync(self.stream(prompt, **options))

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
        chosen = store or self.store
        run_id = run_id or uuid.uuid4().hex
        output = self._spec(output_type)

        async def start(sink: EventSink) -> RunResult[Any]:
            state = await self._new_run(
                prompt, message_history, run_id, session_id, chosen, output, external_tools
            )
            state.limits = UsageLimits.of(limits)
            with self.toolbox.bind(state.run_id, self.model):
                ctx = await self._context(
                    state, deps, sink, True, output=output, tap=self._run_tap()
                )
                return await start_run(ctx, self._strategy, self.program, chosen)

        return RunStream(start, run_id)

    async def resume(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: Any = None,
    ) -> RunResult[Any]:
        """Continue a stored run (crashed, or suspended for approval) from any process.

        A typed run keeps its type: ``output_type`` (else the agent's) validates the answer,
        and without either the answer is the JSON the run's stored schema describes.
        """
        chosen = store or self.store
        if chosen is None:
            raise UserError("resume needs the store the run was checkpointed to")
        output = self._spec(output_type)
        with self.toolbox.bind(run_id, self.model):
            ctx = await self._context(self.new_state("", run_id=run_id), deps, output=output)
            return await resume_run(ctx, self._strategy, self.program, chosen, run_id, value)

    async def aclose(self) -> None:
        """Release what the agent holds (MCP sessions)."""
        await self.toolbox.close()

    async def _close_owned(self) -> None:
        """Close the toolbox and the model this agent built from its model string."""
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
