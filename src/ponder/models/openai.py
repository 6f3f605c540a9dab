"""`OpenAIModel`: any OpenAI-compatible chat-completions provider, via the official SDK.

One ``AsyncOpenAI`` client per model instance, with the SDK's own retries off: ponder
retries 429 / 5xx / connection errors / timeouts itself (see `RetryPolicy` and
`SDKModel`) inside one total timeout, and every failure surfaces as a typed `ModelError`.

Each request is adapted to the provider's `Capabilities` (see `ponder.models.degrade`).
An error naming a feature the request used turns that feature off for this provider,
base URL and model for the rest of the process, and the request is sent again; the
response lists the degradations it needed. Tool calls a model wrote as text are
recovered, and call ids a server reuses are replaced.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ponder.exceptions import EmptyStreamError, ModelError
from ponder.models.adapter import Assembler, SDKModel
from ponder.models.base import (
    Degradation,
    ForceTool,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    StreamEvent,
)
from ponder.models.capabilities import Capabilities, effective, learn, learned
from ponder.models.degrade import Plan, adapt, probe_candidate, probe_feature, refused_feature
from ponder.models.openai_response import deltas_of, response_from_message, with_unique_ids
from ponder.models.openai_stream import StreamAssembler
from ponder.models.openai_wire import prompt_cache_key, request_body
from ponder.models.providers import ProviderProfile, provider_profile
from ponder.models.retry import AttemptBudget, Failure, RetryPolicy
from ponder.models.sdk_errors import translate_sdk_error
from ponder.models.structured import tool_output_to_text
from ponder.models.textcalls import recover_text_calls
from ponder.models.windows import http_json, probe_window

if TYPE_CHECKING:
    from openai import AsyncOpenAI  # noqa: F401 (the client type of the base class)

__all__ = ["OpenAIModel", "translate_error"]

_NO_STREAM = "sent without streaming, the answer as one delta"


class OpenAIModel(SDKModel["AsyncOpenAI"]):
    """A chat model behind an OpenAI-compatible API (OpenAI, DeepSeek, Ollama, vLLM, ...).

    ``capabilities`` overrides single features of the provider's profile, e.g.
    ``{"required_tool_choice": False}``, or replaces them all.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str | ProviderProfile = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        settings: ModelSettings | None = None,
        retry: RetryPolicy | None = None,
        capabilities: Capabilities | Mapping[str, bool] | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        self.profile = provider_profile(provider)
        self.model = model
        base = self.profile.capabilities
        if isinstance(capabilities, Capabilities):
            base = capabilities
        elif capabilities:
            base = base.updated(capabilities)
        self.capabilities = base
        key, url = self.profile.api_key(api_key), self.profile.base_url(base_url)
        self._key = (self.profile.name, url, model)
        self._get = http_json(key)
        self._setup(
            settings,
            retry,
            lambda timeout: AsyncOpenAI(api_key=key, base_url=url, max_retries=0, timeout=timeout),
        )
        if self.profile.local:  # a local server goes on with a request it timed out on
            self.retry = replace(self.retry, retry_timeouts=False)

    @property
    def name(self) -> str:
        """``<provider>:<model>``."""
        return f"{self.profile.name}:{self.model}"

    @property
    def effective_capabilities(self) -> Capabilities:
        """The capabilities requests are sent with now (profile, config, then what was learned)."""
        return effective(self.capabilities, self._key)

    async def request(
        self, request: ModelRequest, *, budget: AttemptBudget | None = None
    ) -> ModelResponse:
        """Send one request; a local server is first asked for its window (once).

        ``budget``: as `SDKModel.request`'s.
        """
        await self._probe()
        return await super().request(request, budget=budget)

    async def stream(
        self, request: ModelRequest, *, budget: AttemptBudget | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one request: deltas, then the `ModelResponse` last.

        Where the provider cannot stream automatic tool calls, the request is sent whole
        and its deltas are yielded at once. A local server is first asked for its window.
        ``budget``: as `SDKModel.request`'s.
        """
        await self._probe()
        budget = budget or AttemptBudget.of(self.retry)
        plan = self._plan(request)
        automatic = plan.request.tools and not isinstance(plan.request.tool_choice, ForceTool)
        if automatic and not self.effective_capabilities.stream_tool_calls:
            response = await self.request(request, budget=budget)
            source = "detected" if "stream_tool_calls" in learned(self._key) else "profile"
            note = Degradation(feature="stream_tool_calls", action=_NO_STREAM, source=source)
            notes = (*response.degradations, note)
            response = response.model_copy(update={"degradations": notes})
            for delta in deltas_of(response):
                yield delta
            yield response
            return
        async for event in super().stream(request, budget=budget):
            yield event

    async def _probe(self) -> None:
        """Ask a local server for its context window, once (see ``ponder.models.windows``)."""
        profile, url, model = self._key
        await probe_window(profile, url, model, self.name, self._get)

    def _plan(self, request: ModelRequest) -> Plan:
        instruct = self.profile.instruct_required
        return adapt(
            request, self.effective_capabilities, learned(self._key), instruct_required=instruct
        )

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        plan = self._plan(request)
        caps = self.effective_capabilities
        body = request_body(
            plan.request, caps, json_object=plan.json_object, provider=self.profile.name
        )
        if caps.prompt_cache_key:  # OpenAI routes requests with one key to one cache
            body["prompt_cache_key"] = prompt_cache_key(plan.request)
        return body

    async def _create(self, body: dict[str, Any], *, stream: bool = False) -> Any:
        if stream:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        return await self.client.chat.completions.create(model=self.model, **body)

    def _parse(self, raw: Any) -> ModelResponse:
        return response_from_message(raw, self.profile.name)

    def _assembler(self) -> Assembler:
        return StreamAssembler(self.profile.name)

    def _finish(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        plan = self._plan(request)
        response = response.model_copy(
            update={
                "model_name": response.model_name or self.model,
                "degradations": plan.degradations,
            }
        )
        if request.output is not None:
            return tool_output_to_text(response, request.output)
        response = recover_text_calls(response, [t.name for t in plan.request.tools])
        return with_unique_ids(response, request.messages)

    def _names_feature(self, error: ModelError, request: ModelRequest, *, stream: bool) -> bool:
        # a stream opened with 200 and left empty is a refusal, not an outage (a server that
        # is down answers 5xx): like a refusal by name, it is answered whatever the budget
        if isinstance(error, EmptyStreamError):
            return True
        body = {**self._body(request), "stream": stream}
        return refused_feature(error, body) is not None

    def _downgrade(self, error: ModelError, request: ModelRequest, *, stream: bool) -> bool:
        body = {**self._body(request), "stream": stream}
        feature = refused_feature(error, body) or probe_feature(error, body)
        return feature is not None and learn(self._key, feature)

    def _may_downgrade(self, body: dict[str, Any]) -> bool:
        return probe_candidate(body) is not None

    def _translate_for(self, exc: BaseException, body: dict[str, Any]) -> Failure | None:
        failure = self._translate(exc)
        if failure is not None and refused_feature(failure.error, body) is not None:
            return Failure(failure.error, is_retryable=False)
        return failure

    def _translate(self, exc: BaseException) -> Failure | None:
        return translate_error(exc, self.name)


def translate_error(exc: BaseException, model_name: str) -> Failure | None:
    """A `Failure` for an exception raised by the ``openai`` SDK or its transport."""
    import openai

    return translate_sdk_error(exc, model_name, openai)
