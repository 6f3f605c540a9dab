"""`RunContext`: the live, non-serialisable side of one run (the VM's ``deps``).

It holds what nodes need besides ``RunState``: the config, the model, the tools, the
executor, the hooks and the event sink. ``request`` sends the ledger to the model (hooks,
streaming, usage); ``emit`` stamps an event and delivers it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ponder.agent.hooks import Hooks, ModelCall
from ponder.agent.run.compaction import context_messages
from ponder.agent.run.state import RunState
from ponder.config import AgentConfig
from ponder.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ThinkingRecorded,
    TodoUpdated,
    ToolCallFailed,
    ToolCallFinished,
    UsageUpdated,
)
from ponder.exceptions import ModelResponseError
from ponder.messages import Message, UserMessage
from ponder.models.base import (
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    ToolChoice,
    ToolDefinition,
)
from ponder.tools.executor import ToolExecutor, ToolOutcome
from ponder.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from ponder.agent.run.checkpointer import Checkpointer
    from ponder.agent.strategies.base import AgentStrategy

__all__ = ["EventSink", "RunContext"]

EventSink = Callable[[Event], None]


@dataclass(slots=True, eq=False)
class RunContext:
    """Everything a workflow node may use during one run."""

    config: AgentConfig
    model: Model
    tools: ToolRegistry
    executor: ToolExecutor
    hooks: Hooks
    state: RunState
    instructions: str = ""
    deps: Any = None
    sink: EventSink | None = None
    stream_text: bool = False
    strategy_type: type[AgentStrategy] | None = None
    checkpointer: Checkpointer | None = None
    resume_value: Any = None
    """The value a suspended run was resumed with (approval decisions)."""
    interrupted: set[str] = field(default_factory=set)
    """Calls that were running when the run stopped (set when it is resumed)."""
    clock: Callable[[], float] = time.time
    """Stamps event times; a durable engine gives its deterministic clock."""
    _strategy: AgentStrategy | None = None
    _backlog: list[Event] = field(default_factory=list)

    @property
    def strategy(self) -> AgentStrategy:
        """The run's strategy instance, created on first use (also after a restore)."""
        if self._strategy is None:
            assert self.strategy_type is not None
            self._strategy = self.strategy_type(self)
        return self._strategy

    @property
    def settings(self) -> ModelSettings:
        """Model settings derived from the config."""
        return ModelSettings(
            temperature=self.config.temperature,
            max_tokens=self.config.max_tokens,
            timeout=self.config.llm_timeout,
        )

    def close(self) -> None:
        """Drop the run's reference cycles (strategy, checkpointer) once it is over."""
        self._strategy = None
        self.checkpointer = None
        self._backlog.clear()

    def emit_now(self, event: Event) -> None:
        """Stamp and deliver ``event`` to the sink; hooks see it at the next ``flush``."""
        state = self.state
        state.event_seq += 1
        event.run_id = state.run_id
        event.seq = state.event_seq
        event.time = self.clock()
        if self.sink is not None:
            self.sink(event)
        if self.hooks.has_event_handlers:
            self._backlog.append(event)

    async def flush(self) -> None:
        """Give pending events to the hooks, in order."""
        while self._backlog:
            event = self._backlog.pop(0)
            await self.hooks.dispatch(event)

    async def emit(self, event: Event) -> None:
        """Stamp, deliver, and run the hooks for ``event``."""
        self.emit_now(event)
        if self._backlog:
            await self.flush()

    async def tool_finished(self, outcome: ToolOutcome) -> None:
        """Report a finished call (events) and save its result (store)."""
        call, result = outcome.call, outcome.result
        if outcome.status == "ok":
            self.emit_now(
                ToolCallFinished(
                    call_id=call.id,
                    name=call.name,
                    output=result.output,
                    data=result.data,
                    duration=outcome.duration,
                )
            )
        else:
            self.emit_now(
                ToolCallFailed(
                    call_id=call.id,
                    name=call.name,
                    error=result.error or result.output,
                    status=outcome.status,
                    duration=outcome.duration,
                )
            )
        data = result.data
        if result.success and isinstance(data, dict):
            display = data.get("display_type")
            if display == "thinking":
                self.emit_now(ThinkingRecorded(call_id=call.id, data=data))
            elif display == "plan":
                self.emit_now(TodoUpdated(call_id=call.id, data=data))
        if self.checkpointer is not None:
            await self.checkpointer.record(outcome)

    def append_user(self, content: str) -> None:
        """Append a runtime-injected user message to the ledger."""
        self.state.ledger.append(UserMessage(content=content))

    async def request(
        self,
        purpose: str,
        tools: Sequence[ToolDefinition] = (),
        tool_choice: ToolChoice = "auto",
        *,
        output: OutputSchema | None = None,
        messages: Sequence[Message] | None = None,
    ) -> ModelResponse:
        """Send the ledger (or ``messages``) to the model and account for usage.

        With ``use_minimal_context`` the ledger is sent without its earlier turns.
        """
        if messages is None:
            self.state.ledger.ensure_sendable()
            messages = context_messages(self.state, self.config.use_minimal_context)
        call: ModelCall | None = None
        if self.hooks.has_precompletion or self.hooks.has_completion:
            call = ModelCall(self.state.run_id, purpose, list(messages), list(tools), tool_choice)
            await self.hooks.before_request(call)
            messages, tools, tool_choice = call.messages, call.tools, call.tool_choice
        request = ModelRequest(messages, tools, tool_choice, output, self.settings)
        if self.stream_text and self.sink is not None:
            response = await self._stream(request)
        else:
            response = await self.model.request(request)
        if call is not None:
            response = await self.hooks.after_response(call, response)
        usage = self.state.usage = self.state.usage + response.usage
        self.emit_now(
            UsageUpdated(
                requests=usage.requests,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
            )
        )
        return response

    async def _stream(self, request: ModelRequest) -> ModelResponse:
        final: ModelResponse | None = None
        async for item in self.model.stream(request):
            if isinstance(item, ModelResponse):
                final = item
            elif item.kind == "text_delta":
                self.emit_now(TextDelta(text=item.text))
            elif item.kind == "reasoning_delta":
                self.emit_now(ReasoningDelta(text=item.text))
        await self.flush()
        if final is None:
            raise ModelResponseError("the model's stream ended without a response")
        return final
