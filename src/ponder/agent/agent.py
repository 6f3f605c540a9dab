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
from typing import Any

from pydantic import ValidationError

from ponder.agent.hooks import Hooks
from ponder.agent.result import RunResult
from ponder.agent.run.context import EventSink, RunContext
from ponder.agent.run.driver import resume_run, start_run
from ponder.agent.run.state import RunState
from ponder.agent.run.tap import RunTap, combine_taps
from ponder.agent.run.workflows import program_for
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.chat import NoActionStrategy
from ponder.agent.strategies.react import ReActStrategy
from ponder.agent.stream import RunStream
from ponder.agent.sync import close_at_exit, iterate_sync, run_coroutine_sync
from ponder.agent.toolbox import Toolbox
from ponder.config import AgentConfig, ConfigWarning
from ponder.events import Event
from ponder.exceptions import StoreError, UserError
from ponder.instrumentation import Instrumentation, resolve_instrumentation
from ponder.messages import Ledger, Message, messages_from_json
from ponder.models.base import Model, ModelSettings, Usage
from ponder.store.base import Store, StoredRun
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool
from ponder.vm import Program

__all__ = ["Agent"]


def _session_tool_states(stored: StoredRun, registry: ToolRegistry) -> dict[str, Any]:
    """The stateful tools' states of a session's stored turn, validated; ``{}`` if none."""
    vm = stored.header.get("vm")
    state = vm.get("state") if isinstance(vm, dict) else None
    found = state.get("tool_states") if isinstance(state, dict) else None
    states: dict[str, Any] = {}
    for name, raw in (found or {}).items() if isinstance(found, dict) else ():
        tool = registry.get(name)
        if tool is None or tool.state_type is None:
            continue  # a tool this agent no longer offers
        try:
            states[name] = tool.state_type.model_validate(raw)
        except ValidationError as exc:
            raise StoreError(
                f"run {stored.record.run_id!r}: the stored state of tool {name!r} is invalid: "
                f"{exc.errors()[0]['msg']}"
            ) from None
    return states


class Agent:
    """An agent: a model, tools and instructions, run by ponder's workflow VM."""

    def __init__(
        self,
        model: str | Model | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        instructions: str = "",
        config: AgentConfig | None = None,
        *,
        strategy: type[AgentStrategy] | None = None,
        store: Store | None = None,
        record: str | os.PathLike[str] | None = None,
        instrument: bool | Instrumentation | None = None,
        **config_overrides: Any,
    ) -> None:
        base = config or AgentConfig()
        self.config = base.replace(**config_overrides) if config_overrides else base
        self.instructions = instructions or self.config.instructions
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
        self.toolbox = Toolbox(self.config, tools)
        self.on_elicitation = self.toolbox.on_elicitation
        self._executor: ToolExecutor | None = None
        self._strategy = strategy or self._default_strategy()
        program_for(self._strategy)  # a strategy the workflows cannot drive is refused now
        self._warn_unoffered_tools()

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
        """The model, resolved from its string on first use."""
        if self._model is None:
            from ponder.models import RetryPolicy, resolve_model

            spec = self._model_spec
            if spec is None:
                raise UserError("no model given: pass model='openai:gpt-4o-mini' or set 'model'")
            config = self.config
            self._model = resolve_model(
                spec,
                api_key=config.api_key,
                base_url=config.base_url,
                settings=ModelSettings(
                    timeout=config.llm_total_timeout, idle_timeout=config.llm_timeout
                ),
                retry=RetryPolicy(max_retries=config.max_retries),
                capabilities=config.model_capabilities or None,
            )
        return self._model

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
        tap: RunTap | None = None,
    ) -> RunContext:
        registry, executor = await self._tools_now()
        ctx = RunContext(
            config=self.config, model=self.model, tools=registry, executor=executor,
            hooks=self.hooks, state=state, instructions=self.instructions, deps=deps,
            sink=sink, stream_text=stream, tap=tap,
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
        )

    async def _new_run(
        self,
        prompt: str,
        history: Sequence[Message],
        run_id: str | None,
        session_id: str | None,
        store: Store | None,
    ) -> RunState:
        """A fresh state; with a stored session, its stateful tools' states carry over.

        The session's last completed turn is also the history when none is given.
        """
        states: dict[str, Any] = {}
        if session_id is not None and store is not None:
            latest = await store.latest_in_session(session_id)
            if latest is not None:
                stored = await store.load(latest)
                states = _session_tool_states(stored, self.toolbox.registry)
                if not history:
                    history = messages_from_json(stored.messages)
        state = self.new_state(
            prompt, message_history=history, run_id=run_id, session_id=session_id
        )
        state.tool_states.update(states)
        return state

    async def run(
        self,
        prompt: str,
        *,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
    ) -> RunResult:
        """Run the agent on ``prompt``; with a ``store``, checkpoint it as it goes.

        With a ``session_id`` and a store, the session's last completed turn is the
        conversation this one continues (unless ``message_history`` is given).
        """
        store = store or self.store
        state = await self._new_run(prompt, message_history, run_id, session_id, store)
        with self.toolbox.bind(state.run_id, self.model):
            ctx = await self._context(state, deps, tap=self._run_tap())
            return await start_run(ctx, self._strategy, self.program, store)

    def run_sync(self, prompt: str, **options: Any) -> RunResult:
        """`run` for code without an event loop (raises `UserError` inside a running one).

        Calls on one thread share one event loop, so the model's client and MCP sessions
        stay usable from call to call.
        """
        close_at_exit(self._close_owned)
        return run_coroutine_sync(self.run(prompt, **options))

    def stream_sync(self, prompt: str, **options: Any) -> Iterator[Event]:
        """`stream` for scripts: the run's events as a plain iterator.

        Leaving the loop early cancels the run, as with `stream`.
        """
        close_at_exit(self._close_owned)
        return iterate_sync(self.stream(prompt, **options))

    def stream(
        self,
        prompt: str,
        *,
        message_history: Sequence[Message] = (),
        deps: Any = None,
        run_id: str | None = None,
        session_id: str | None = None,
        store: Store | None = None,
    ) -> RunStream:
        """Run the agent, yielding its events as they happen; ``.result`` at the end."""
        chosen = store or self.store
        run_id = run_id or uuid.uuid4().hex

        async def start(sink: EventSink) -> RunResult:
            state = await self._new_run(prompt, message_history, run_id, session_id, chosen)
            with self.toolbox.bind(state.run_id, self.model):
                ctx = await self._context(state, deps, sink, True, self._run_tap())
                return await start_run(ctx, self._strategy, self.program, chosen)

        return RunStream(start, run_id)

    async def resume(
        self, run_id: str, value: Any = None, *, store: Store | None = None, deps: Any = None
    ) -> RunResult:
        """Continue a stored run (crashed, or suspended for approval) from any process."""
        chosen = store or self.store
        if chosen is None:
            raise UserError("resume needs the store the run was checkpointed to")
        with self.toolbox.bind(run_id, self.model):
            ctx = await self._context(self.new_state("", run_id=run_id), deps)
            return await resume_run(ctx, self._strategy, self.program, chosen, run_id, value)

    async def aclose(self) -> None:
        """Release what the agent holds (MCP sessions)."""
        await self.toolbox.close()

    async def _close_owned(self) -> None:
        """Close the toolbox and the model this agent built from its model string."""
        await self.aclose()
        close = getattr(self._model, "aclose", None)
        if isinstance(self._model_spec, str) and close is not None:
            await close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
