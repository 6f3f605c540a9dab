"""`ModelCaller`: one run's requests to its model.

It sends the ledger (or given messages) through the hooks, streams text to the run's
events when the run streams, retries a response without an answer once, reports fallbacks
and degradations, and adds up usage and cost in ``RunState``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ponder.agent.hooks import Hooks, ModelCall
from ponder.agent.output import OutputSpec, PartialOutput
from ponder.agent.run.bus import EventBus
from ponder.agent.run.state import RunState
from ponder.agent.run.window import context_messages
from ponder.config import AgentConfig
from ponder.cost import response_cost, sum_cost
from ponder.events import (
    ModelDegraded,
    ModelFallback,
    ModelUnanswered,
    OutputPartial,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from ponder.exceptions import ModelResponseError
from ponder.messages import Message
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

__all__ = ["ANSWER_PURPOSES", "ModelCaller"]

ANSWER_PURPOSES = frozenset({"final_answer", "chat", "rag", "rag_retrieval"})
"""Requests whose text is the answer as it streams; other text streams as reasoning."""


_NONE_DEGRADED: frozenset[str] = frozenset()
"""One empty set for every caller: an empty frozenset is a new, GC-tracked object each time."""


class ModelCaller:
    """Sends one run's model requests and accounts for them."""

    __slots__ = (
        "_degraded",
        "_offered",
        "answer_streamed",
        "bus",
        "config",
        "hooks",
        "model",
        "output",
        "purpose",
        "sent_tokens",
        "sent_upto",
        "state",
        "stream_text",
        "unanswered",
    )

    def __init__(
        self,
        config: AgentConfig,
        model: Model,
        hooks: Hooks,
        state: RunState,
        bus: EventBus,
        *,
        output: OutputSpec | None = None,
        stream_text: bool = False,
    ) -> None:
        self.config = config
        self.model = model
        self.hooks = hooks
        self.state = state
        self.bus = bus
        self.output = output
        """The type the final answer must have (None: plain text)."""
        self.stream_text = stream_text
        """Whether text goes out as events while it arrives (the run has a stream)."""
        self.unanswered: Unanswered | None = None
        """Whether the last response (after its one retry) carried no answer, and why."""
        self.purpose = ""
        """The purpose of the latest request (``reasoning``, ``reflection``, ...)."""
        self.answer_streamed = False
        """Whether text went out as `TextDelta` events (only requests for the answer do)."""
        self.sent_upto = 0
        """How many ledger messages the latest request that sent the whole ledger sent."""
        self.sent_tokens = 0
        """The prompt tokens the provider counted for that request (0: not reported)."""
        self._offered: Sequence[ToolDefinition] | None = None
        """The tools of the latest request, whose names are ``state.offered_tools``."""
        self._degraded = _NONE_DEGRADED  # shared until a degradation is noted

    @property
    def answer_schema(self) -> OutputSchema | None:
        """What a request for the final answer with tools off asks for."""
        return self.output.schema if self.output is not None else None

    @property
    def settings(self) -> ModelSettings:
        """Model settings derived from the config (frozen, so runs of one config share them)."""
        return _settings_for(self.config)

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

        With ``use_minimal_context`` the ledger is sent without its earlier turns. A request
        with tools off (none given, ``tool_choice`` ``"none"``) carries the tools the run
        offered last as `ModelRequest.prefix_tools`. A response without an answer (see
        `ModelResponse.unanswered`) is asked for once more (structured requests retry on
        their own); ``unanswered`` keeps the outcome.
        """
        sent = 0  # ledger messages sent, when the ledger is what is sent
        if messages is None:
            self.state.ledger.ensure_sendable()
            messages = context_messages(self.state, self.config.use_minimal_context)
            sent = len(messages)
        call: ModelCall | None = None
        if self.hooks.has_precompletion or self.hooks.has_completion:
            call = ModelCall(self.state.run_id, purpose, list(messages), list(tools), tool_choice)
            await self.hooks.before_request(call)
            messages, tools, tool_choice = call.messages, call.tools, call.tool_choice
            sent = 0  # a hook may have changed them
        prefix = self._prefix(tools, tool_choice)
        if tools is not self._offered and not prefix:  # one list until the tools change
            self._offer(tools)
        self.purpose = purpose
        request = ModelRequest(messages, tools, tool_choice, output, self.settings, prefix)
        retrying = True  # sent here, not by a helper, and no iterator: a waiting run keeps less
        while True:
            started = self.bus.clock()  # a durable engine's clock stays deterministic
            if self._streams(request):
                response = await self._stream(request, answers=self._answers(purpose))
            else:
                response = await self.model.request(request)
            latency = self.bus.clock() - started
            if call is not None:
                response = await self.hooks.after_response(call, response)
            self._account(response, purpose, latency, sent)
            self.unanswered = response.unanswered if output is None else None
            if self.unanswered is None:
                return response
            self.bus.emit_now(ModelUnanswered(reason=self.unanswered, retrying=retrying))
            if not retrying:
                return response
            retrying = False

    def _streams(self, request: ModelRequest) -> bool:
        """True if ``request`` is streamed: text streams to a sink, answers included."""
        answer = request.output is not None and request.output is self.answer_schema
        return self.stream_text and (request.output is None or answer)

    def _answers(self, purpose: str) -> bool:
        """True if a streamed request's text is answer text.

        After ``agent_stop``, the action request's text reply is the answer.
        """
        return purpose in ANSWER_PURPOSES or (purpose == "action" and self.state.suggested_stop)

    def _prefix(
        self, tools: Sequence[ToolDefinition], tool_choice: ToolChoice
    ) -> Sequence[ToolDefinition]:
        """What a request with tools off sends to keep the tool loop's prompt prefix."""
        if tools or tool_choice != "none" or not self._offered:
            return ()
        return self._offered

    def _offer(self, tools: Sequence[ToolDefinition]) -> None:
        self._offered = tools
        offered = tuple(t.name for t in tools)  # a tuple of names: untracked by the GC
        if offered != self.state.offered_tools:  # the same list stays: nothing to keep
            self.state.offered_tools = offered

    def _account(self, response: ModelResponse, purpose: str, latency: float, sent: int) -> None:
        """Report a response's fallbacks and degradations; add up its usage and cost.

        ``sent``: how many ledger messages the request sent (0: other messages); the prompt
        tokens the provider counted for them tell compaction what its estimate misses.
        """
        if sent and not self.config.use_minimal_context:
            self.sent_upto, self.sent_tokens = sent, response.usage.input_tokens
        for fell in response.fallbacks:
            self.bus.emit_now(ModelFallback(**fell.model_dump()))
        for note in response.degradations:
            if note.feature not in self._degraded:
                self._degraded |= {note.feature}
                self.bus.emit_now(
                    ModelDegraded(
                        model=self.model.name,
                        feature=note.feature,
                        action=note.action,
                        source=note.source,
                    )
                )
        usage = self.state.usage = self.state.usage + response.usage
        cost = sum_cost(self.state.cost, response_cost(self.model, response, self.bus.clock()))
        if cost is not self.state.cost:  # unpriced models keep None
            self.state.cost = cost
        if not self.bus.heard:
            self.bus.skip()
            return
        self.bus.emit_now(
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
                    self.bus.emit_now(OutputPartial(output=shown))
            elif item.kind == "text_delta" and answers:
                self.answer_streamed = True
                self.bus.emit_now(TextDelta(text=item.text))
            elif item.kind in ("reasoning_delta", "text_delta"):
                self.bus.emit_now(ReasoningDelta(text=item.text))
        await self.bus.flush()
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
