"""`RunContext`: the live, non-serialisable side of one run.

It holds what strategies and the run machinery need besides ``RunState``: the config,
the model, the tools, the executor, the hooks and the event sink; the driver adds the
checkpointer and, on a resume, the approval decision and the interrupted calls.
``request`` sends the ledger to the model (hooks, streaming, usage); ``emit`` stamps an
event and delivers it. Nodes reach it through `RunDeps` (``ponder.agent.strategies.nodes``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ponder.agent.hooks import Hooks, ModelCall
from ponder.agent.output import OutputSpec, PartialOutput
from ponder.agent.run.link import is_held
from ponder.agent.run.state import RunState
from ponder.agent.run.window import context_messages
from ponder.config import AgentConfig
from ponder.cost import response_cost, sum_cost
from ponder.events import (
    Event,
    ModelDegraded,
    ModelFallback,
    ModelUnanswered,
    OutputPartial,
    ReasoningDelta,
    TextDelta,
    Thinking,
    Todo,
    ToolCallFailed,
    ToolCallFinished,
    Usage,
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
    Unanswered,
)
from ponder.tools.executor import ToolExecutor, ToolOutcome
from ponder.tools.external import external_tools
from ponder.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from ponder.agent.run.checkpointer import Checkpointer
    from ponder.mcp.elicitation import InputHold
    from ponder.observability.tap import RunTap

__all__ = ["EventSink", "RunContext", "ToolSource"]

EventSink = Callable[[Event], None]
ANSWER_PURPOSES = frozenset({"final_answer", "chat", "rag", "rag_retrieval"})
"""Requests whose text is the answer as it streams; other text streams as reasoning."""
EVENT_TEXT_LIMIT = 20_000
"""At most this much of a tool's error text goes into its event (the ledger keeps it all)."""
ToolSource = Callable[[], Awaitable[tuple[ToolRegistry, ToolExecutor]]]


@dataclass(slots=True, eq=False)
class RunContext:
    """The live side of one run: what strategies and the run machinery use besides its state."""

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
    checkpointer: Checkpointer | None = None
    """Set by the driver when the run has a store."""
    decision: Any = None
    """The approval decision a suspended run was resumed with (see ``run.approval``)."""
    interrupted: AbstractSet[str] = frozenset()
    """Calls that were running when the run stopped (set when it is resumed)."""
    inputs: InputHold | None = None
    """The MCP servers' questions held for this run, and its answers (``run.elicitation``)."""
    tool_source: ToolSource | None = None
    """The current tools and their executor (MCP servers' lists change during a run)."""
    unanswered: Unanswered | None = None
    """Whether the last response (after its one retry) carried no answer, and why."""
    clock: Callable[[], float] = time.time
    """Stamps event times; a durable engine gives its deterministic clock."""
    output: OutputSpec | None = None
    """The type the final answer must have (None: plain text); see ``run.final_output``."""
    tap: RunTap | None = None
    """What records, replays or traces the run (see ``run.tap``); None for most runs."""
    purpose: str = ""
    """The purpose of the latest model request (``reasoning``, ``reflection``, ...)."""
    answer_streamed: bool = False
    """Whether text went out as `TextDelta` events (only requests for the answer stream it)."""
    _backlog: list[Event] | None = None
    """Events the hooks have not seen yet (only with event handlers)."""
    _own_tools: ToolRegistry | None = None
    _offered: Sequence[ToolDefinition] | None = None
    """The tools of the latest request, whose names are ``state.offered_tools``."""
    _degraded: frozenset[str] = frozenset()

    @property
    def answer_schema(self) -> OutputSchema | None:
        """What a request for the final answer with tools off asks for."""
        return self.output.schema if self.output is not None else None

    @property
    def settings(self) -> ModelSettings:
        """Model settings derived from the config (frozen, so runs of one config share them)."""
        return _settings_for(self.config)

    async def refresh_tools(self) -> bool:
        """Take up the current tool set between rounds; True when it changed."""
        if self.tool_source is None:
            return False
        tools, executor = await self.tool_source()
        if tools is self._own_tools:
            return False
        self.tools, self.executor = tools, executor
        self.add_external_tools()
        return True

    def add_external_tools(self) -> None:
        """Offer the run's external tools (``RunState.external_tools``) besides the agent's."""
        self._own_tools = self.tools
        if self.state.external_tools:
            self.tools = self.tools.merged(external_tools(self.state.external_tools))

    def close(self) -> None:
        """Drop the run's reference cycles (the checkpointer) once it is over."""
        if self.checkpointer is not None:
            self.checkpointer.vm = None  # the VM's ``after`` hook is the checkpointer's
        self.checkpointer = None
        self._backlog = None

    @property
    def heard(self) -> bool:
        """Whether anything receives events: a sink, the store, a tap or an event hook.

        The hot paths build no event that nothing receives; `skip_event` keeps the
        numbering as though it had been emitted.
        """
        return (
            self.sink is not None
            or self.checkpointer is not None
            or self.tap is not None
            or self.hooks.has_event_handlers
        )

    def skip_event(self) -> None:
        """Count an event that nothing would receive (see `heard`), without building it."""
        self.state.event_seq += 1

    def emit_now(self, event: Event) -> None:
        """Stamp and deliver ``event`` to the sink; hooks see it at the next ``flush``."""
        state = self.state
        state.event_seq += 1
        event.run_id = state.run_id
        event.seq = state.event_seq
        event.time = self.clock()
        if self.sink is not None:
            self.sink(event)
        if self.checkpointer is not None:
            self.checkpointer.note(event)
        if self.tap is not None:
            self.tap.event(event)
        if self.hooks.has_event_handlers:
            if self._backlog is None:
                self._backlog = []
            self._backlog.append(event)

    async def flush(self) -> None:
        """Give pending events to the hooks, in order."""
        backlog = self._backlog
        while backlog:
            event = backlog.pop(0)
            await self.hooks.dispatch(event)

    async def emit(self, event: Event) -> None:
        """Stamp, deliver, and run the hooks for ``event``."""
        self.emit_now(event)
        if self._backlog:
            await self.flush()

    async def tool_finished(self, outcome: ToolOutcome) -> None:
        """Report a finished call (events) and save its result (store)."""
        call, result = outcome.call, outcome.result
        if self.inputs is not None and call.id in self.inputs.held:
            return  # the call asked a question: its result is dropped, the run suspends
        if is_held(result):
            return  # not finished: the sub-agent waits for approval (see ``subagent``)
        if not self.heard:
            self.skip_event()
        elif outcome.status == "ok":
            self.emit_now(
                ToolCallFinished(
                    call_id=call.id,
                    name=call.name,
                    output=outcome.message.content,  # capped like the model's copy
                    data=result.data,
                    duration=outcome.duration,
                )
            )
        else:
            self.emit_now(
                ToolCallFailed(
                    call_id=call.id,
                    name=call.name,
                    error=(result.error or outcome.message.content)[:EVENT_TEXT_LIMIT],
                    status=outcome.status,
                    duration=outcome.duration,
                )
            )
        if result.success and result.display is not None and isinstance(result.data, dict):
            if result.display == "thinking":
                self.emit_now(Thinking(call_id=call.id, data=result.data))
            else:
                self.emit_now(Todo(call_id=call.id, data=result.data))
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

        With ``use_minimal_context`` the ledger is sent without its earlier turns. A response
        without an answer (see `ModelResponse.unanswered`) is asked for once more (structured
        requests retry on their own); ``unanswered`` keeps the outcome.
        """
        if messages is None:
            self.state.ledger.ensure_sendable()
            messages = context_messages(self.state, self.config.use_minimal_context)
        call: ModelCall | None = None
        if self.hooks.has_precompletion or self.hooks.has_completion:
            call = ModelCall(self.state.run_id, purpose, list(messages), list(tools), tool_choice)
            await self.hooks.before_request(call)
            messages, tools, tool_choice = call.messages, call.tools, call.tool_choice
        if tools is not self._offered:  # a strategy offers one list until its tools change
            self._offered = tools
            offered = tuple(t.name for t in tools)  # a tuple of names: untracked by the GC
            if offered != self.state.offered_tools:  # the same list stays: nothing to keep
                self.state.offered_tools = offered
        self.purpose = purpose
        request = ModelRequest(messages, tools, tool_choice, output, self.settings)
        retrying = True  # sent here, not by a helper, and no iterator: a waiting run keeps less
        while True:
            started = self.clock()  # a durable engine's clock stays deterministic
            if self._streams(request):
                response = await self._stream(request, answers=self._answers(purpose))
            else:
                response = await self.model.request(request)
            latency = self.clock() - started
            if call is not None:
                response = await self.hooks.after_response(call, response)
            self._account(response, purpose, latency)
            self.unanswered = response.unanswered if output is None else None
            if self.unanswered is None:
                return response
            self.emit_now(ModelUnanswered(reason=self.unanswered, retrying=retrying))
            if not retrying:
                return response
            retrying = False

    def _streams(self, request: ModelRequest) -> bool:
        """True if ``request`` is streamed: text streams to a sink, answers included."""
        answer = request.output is not None and request.output is self.answer_schema
        return self.stream_text and self.sink is not None and (request.output is None or answer)

    def _answers(self, purpose: str) -> bool:
        """True if a streamed request's text is answer text.

        After ``agent_stop``, the action request's text reply is the answer.
        """
        return purpose in ANSWER_PURPOSES or (purpose == "action" and self.state.suggested_stop)

    def _account(self, response: ModelResponse, purpose: str, latency: float) -> None:
        """Report a response's fallbacks and degradations; add up its usage and cost."""
        for fell in response.fallbacks:
            self.emit_now(ModelFallback(**fell.model_dump()))
        for note in response.degradations:
            if note.feature not in self._degraded:
                self._degraded |= {note.feature}
                self.emit_now(
                    ModelDegraded(
                        model=self.model.name,
                        feature=note.feature,
                        action=note.action,
                        source=note.source,
                    )
                )
        usage = self.state.usage = self.state.usage + response.usage
        cost = sum_cost(self.state.cost, response_cost(self.model, response, self.clock()))
        if cost is not self.state.cost:  # unpriced models keep None
            self.state.cost = cost
        if not self.heard:
            self.skip_event()
            return
        self.emit_now(
            Usage(
                requests=usage.requests,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_input_tokens=usage.cached_input_tokens,
                purpose=purpose,
                latency=latency,
                cost=cost,
            )
        )

    async def _stream(self, request: ModelRequest, *, answers: bool) -> ModelResponse:
        """Stream the response; its text is answer text only if the request ``answers``.

        Text of any other request (reasoning, an action round's reply, reflection,
        compaction) streams as reasoning: it may never become the answer, and a reply that
        does is given as one `TextDelta` when the run settles it (see ``AgentStrategy.finish``).
        """
        final: ModelResponse | None = None
        partial = PartialOutput(self.output) if request.output and self.output else None
        async for item in self.model.stream(request):
            if isinstance(item, ModelResponse):
                final = item
            elif partial is not None:
                if (shown := partial.feed(item)) is not None:
                    self.emit_now(OutputPartial(output=shown))
            elif item.kind == "text_delta" and answers:
                self.answer_streamed = True
                self.emit_now(TextDelta(text=item.text))
            elif item.kind in ("reasoning_delta", "text_delta"):
                self.emit_now(ReasoningDelta(text=item.text))
        await self.flush()
        if final is None:
            raise ModelResponseError("the model's stream ended without a response")
        return final


_last_settings: list[tuple[AgentConfig, ModelSettings]] = []


def _settings_for(config: AgentConfig) -> ModelSettings:
    """The `ModelSettings` of ``config``; the latest config's are kept for the next request."""
    if _last_settings and _last_settings[0][0] is config:
        return _last_settings[0][1]
    settings = ModelSettings(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.llm_total_timeout,
        idle_timeout=config.llm_timeout,
    )
    _last_settings[:] = [(config, settings)]
    return settings
