"""`Agent`: configuration, and the entry points that run it (`run`, `stream`, `resume`).

An agent holds configuration only — model, tools, instructions, config, hooks, and the
pooled MCP sessions. Every run gets its own `RunState` (plain data) and `RunContext`
(the live pieces), so any number of runs can share one agent concurrently.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

from ponder.agent.hooks import Hooks
from ponder.agent.result import RunResult
from ponder.agent.run.context import EventSink, RunContext
from ponder.agent.run.driver import resume_run, start_run
from ponder.agent.run.state import RunState
from ponder.agent.run.workflows import program_for
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.chat import NoActionStrategy
from ponder.agent.strategies.react import ReActStrategy
from ponder.agent.stream import RunStream
from ponder.agent.sync import close_at_exit, iterate_sync, run_coroutine_sync
from ponder.agent.toolbox import Toolbox
from ponder.config import AgentConfig
from ponder.events import Event
from ponder.exceptions import UserError
from ponder.messages import Ledger, Message, messages_from_json
from ponder.models.base import Model, ModelSettings
from ponder.store.base import Store
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool
from ponder.vm import Program

__all__ = ["Agent"]


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
        **config_overrides: Any,
    ) -> None:
        base = config or AgentConfig()
        self.config = base.replace(**config_overrides) if config_overrides else base
        self.instructions = instructions or self.config.instructions
        self.store = store
        self.hooks = Hooks()
        self.on_event = self.hooks.on_event
        self.on_precompletion = self.hooks.on_precompletion
        self.on_completion = self.hooks.on_completion
        self._model_spec = model if model is not None else self.config.model
        self._model: Model | None = None
        self.toolbox = Toolbox(self.config, tools)
        self._executor: ToolExecutor | None = None
        self._strategy = strategy or self._default_strategy()

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
                settings=ModelSettings(timeout=config.llm_timeout),
                retry=RetryPolicy(max_retries=config.max_retries),
            )
        return self._model

    @property
    def program(self) -> Program:
        """The VM program this agent's workflow runs."""
        return program_for(self._strategy.get_category())

    def tool_registry(self) -> ToolRegistry:
        """The tools offered to the model (as of the last run, for MCP servers' tools)."""
        return self.toolbox.registry

    async def _context(
        self, state: RunState, deps: Any, sink: EventSink | None = None, stream: bool = False
    ) -> RunContext:
        registry = await self.toolbox.refresh()
        executor = self._executor
        if executor is None or executor.registry is not registry:
            # one executor per tool set: per-tool concurrency limits hold across runs
            executor = self._executor = ToolExecutor(
                registry,
                default_timeout=self.config.tool_timeout,
                max_output_chars=self.config.tool_output_max_chars,
            )
        return RunContext(
            config=self.config, model=self.model, tools=registry, executor=executor,
            hooks=self.hooks, state=state, instructions=self.instructions, deps=deps,
            sink=sink, stream_text=stream, strategy_type=self._strategy,
        )  # fmt: skip

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
        """A fresh state; a session's last completed turn is the history when none is given."""
        if not history and session_id is not None and store is not None:
            latest = await store.latest_in_session(session_id)
            if latest is not None:
                history = messages_from_json((await store.load(latest)).messages)
        return self.new_state(prompt, message_history=history, run_id=run_id, session_id=session_id)

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
        ctx = await self._context(state, deps)
        return await start_run(ctx, self.program, store)

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
            ctx = await self._context(state, deps, sink, True)
            return await start_run(ctx, self.program, chosen)

        return RunStream(start, run_id)

    async def resume(
        self, run_id: str, value: Any = None, *, store: Store | None = None, deps: Any = None
    ) -> RunResult:
        """Continue a stored run (crashed, or suspended for approval) from any process."""
        chosen = store or self.store
        if chosen is None:
            raise UserError("resume needs the store the run was checkpointed to")
        ctx = await self._context(self.new_state(""), deps)
        return await resume_run(ctx, self.program, chosen, run_id, value)

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
