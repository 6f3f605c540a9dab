"""`Agent.resume`, and the entry points for code without an event loop.

`run_sync`, `stream_sync` and `resume_sync` take the options of `run`, `stream` and
`resume` as real keyword parameters and carry the answer's type as those do:
``RunResult[T]`` with ``output_type=T``, else the agent's own. Calls on one thread share
one event loop (see `ponder.agent.sync`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from ponder.agent.result import OutputT, RunResult
from ponder.agent.sync import close_at_exit, iterate_sync, run_coroutine_sync
from ponder.exceptions import UserError

if TYPE_CHECKING:
    from ponder.agent.agent import Agent
    from ponder.agent.launch import Prompt
    from ponder.agent.limits import UsageLimits
    from ponder.agent.output import OutputSpec
    from ponder.agent.stream import RunStream
    from ponder.events import Event
    from ponder.messages import Message
    from ponder.store.base import Store
    from ponder.tools.definition import ToolDefinition

__all__ = ["EntryPoints"]

T = TypeVar("T")


class EntryPoints(Generic[OutputT]):
    """`resume` and the synchronous entry points; `Agent` provides `run` and `stream`."""

    @overload
    async def resume(
        self: EntryPoints[str],
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: None = None,
    ) -> RunResult[Any]: ...  # untyped: a stored run's schema may still type its answer
    @overload
    async def resume(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: None = None,
    ) -> RunResult[OutputT]: ...
    @overload
    async def resume(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: type[T],
    ) -> RunResult[T]: ...
    @overload
    async def resume(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: OutputSpec | None = None,
    ) -> RunResult[Any]: ...
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
        from ponder.agent.launch import context_builder
        from ponder.agent.run.driver import resume_run
        from ponder.agent.session_turns import resumed_turn

        agent = cast("Agent[Any]", self)  # the one subclass
        chosen = store or agent.store
        if chosen is None:
            raise UserError("resume needs the store the run was checkpointed to")
        if agent.record is not None:  # a cassette holds a whole run, from its first request
            raise UserError(
                f"record={str(agent.record)!r} records a run from its start, and resume "
                "continues a stored run: resume with an agent without record=, or record a "
                "run that finishes in one go"
            )
        output = agent._spec(output_type)
        async with resumed_turn(chosen, run_id):  # one turn of its session at a time
            with agent.toolbox.bind(run_id, agent.model):
                build = context_builder(agent, deps, output=output, store=chosen)
                program = agent.program
                return await resume_run(build, agent.strategy_type, program, chosen, run_id, value)

    @overload
    def run_sync(
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
    def run_sync(
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
    def run_sync(
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
        """`run` for code without an event loop (raises `UserError` inside a running one).

        Calls on one thread share one event loop, so the model's client and MCP sessions
        stay usable from call to call.
        """
        agent = self._agent()
        coroutine = agent.run(
            prompt,
            output_type=output_type,
            message_history=message_history,
            deps=deps,
            run_id=run_id,
            session_id=session_id,
            store=store,
            limits=limits,
            external_tools=external_tools,
        )
        return run_coroutine_sync(coroutine)

    def stream_sync(
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
    ) -> Iterator[Event]:
        """`stream` for scripts: the run's events as a plain iterator.

        Leaving the loop early cancels the run, as with `stream`.
        """
        agent = self._agent()
        stream: RunStream[Any] = agent.stream(
            prompt,
            output_type=output_type,
            message_history=message_history,
            deps=deps,
            run_id=run_id,
            session_id=session_id,
            store=store,
            limits=limits,
            external_tools=external_tools,
        )
        return iterate_sync(stream)

    @overload
    def resume_sync(
        self: EntryPoints[str],
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: None = None,
    ) -> RunResult[Any]: ...
    @overload
    def resume_sync(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: None = None,
    ) -> RunResult[OutputT]: ...
    @overload
    def resume_sync(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: type[T],
    ) -> RunResult[T]: ...
    def resume_sync(
        self,
        run_id: str,
        value: Any = None,
        *,
        store: Store | None = None,
        deps: Any = None,
        output_type: Any = None,
    ) -> RunResult[Any]:
        """`resume` for code without an event loop: continue a stored run to its end."""
        agent = self._agent()
        coroutine = agent.resume(run_id, value, store=store, deps=deps, output_type=output_type)
        return run_coroutine_sync(coroutine, "resume_sync")

    def _agent(self) -> Agent[Any]:
        """The agent itself, its owned clients to be closed when the process exits."""
        agent = cast("Agent[Any]", self)  # the one subclass
        close_at_exit(agent._close_owned)
        return agent
