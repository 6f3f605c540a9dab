"""`OpenAIModel`: any OpenAI-compatible chat-completions provider, via the official SDK.

One ``AsyncOpenAI`` client per model instance, with the SDK's own retries off: ponder
retries 429 / 5xx / connection errors / timeouts itself (see `RetryPolicy` and
`SDKModel`) inside one total timeout, and every failure surfaces as a typed `ModelError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ponder.models.adapter import Assembler, SDKModel
from ponder.models.base import ModelRequest, ModelResponse, ModelSettings
from ponder.models.openai_wire import StreamAssembler, request_body, response_from_message
from ponder.models.providers import ProviderProfile, provider_profile
from ponder.models.retry import Failure, RetryPolicy
from ponder.models.sdk_errors import translate_sdk_error
from ponder.models.structured import tool_output_to_text

if TYPE_CHECKING:
    from openai import AsyncOpenAI  # noqa: F401 (the client type of the base class)

__all__ = ["OpenAIModel", "translate_error"]


class OpenAIModel(SDKModel["AsyncOpenAI"]):
    """A chat model behind an OpenAI-compatible API (OpenAI, DeepSeek, Ollama, vLLM, ...)."""

    def __init__(
        self,
        model: str,
        *,
        provider: str | ProviderProfile = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        settings: ModelSettings | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        self.profile = provider_profile(provider)
        self.model = model
        key, url = self.profile.api_key(api_key), self.profile.base_url(base_url)
        self._setup(
            settings,
            retry,
            lambda timeout: AsyncOpenAI(api_key=key, base_url=url, max_retries=0, timeout=timeout),
        )

    @property
    def name(self) -> str:
        """``<provider>:<model>``."""
        return f"{self.profile.name}:{self.model}"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return request_body(request, self.profile)

    async def _create(self, body: dict[str, Any], *, stream: bool = False) -> Any:
        if stream:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        return await self.client.chat.completions.create(model=self.model, **body)

    def _parse(self, raw: Any) -> ModelResponse:
        return response_from_message(raw, self.profile)

    def _assembler(self) -> Assembler:
        return StreamAssembler(self.profile)

    def _finish(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        response = response.model_copy(update={"model_name": response.model_name or self.model})
        if request.output is not None and not self.profile.has_json_schema_output:
            return tool_output_to_text(response, request.output)
        return response

    def _translate(self, exc: BaseException) -> Failure | None:
        return translate_error(exc, self.name)


def translate_error(exc: BaseException, model_name: str) -> Failure | None:
    """A `Failure` for an exception raised by the ``openai`` SDK or its transport."""
    import openai

    return translate_sdk_error(exc, model_name, openai)
