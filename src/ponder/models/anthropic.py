"""`AnthropicModel`: Claude through the official ``anthropic`` SDK (``ponder[anthropic]``).

The SDK is imported when a model is created, never at ``import ponder.models``. One client
per model instance with the SDK's retries off; ponder retries and types errors itself
(see `SDKModel`).
"""

from __future__ import annotations

from typing import Any

from ponder.extras import missing_extra
from ponder.models.adapter import Assembler, SDKModel
from ponder.models.anthropic_wire import StreamAssembler, request_body, response_from_blocks
from ponder.models.base import ModelRequest, ModelResponse, ModelSettings
from ponder.models.providers import ANTHROPIC
from ponder.models.retry import Failure, RetryPolicy
from ponder.models.sdk_errors import translate_sdk_error

__all__ = ["AnthropicModel"]

DEFAULT_MAX_TOKENS = 4096
PROFILE = ANTHROPIC


class AnthropicModel(SDKModel[Any]):
    """A Claude model; ``thinking_budget`` turns on extended thinking (signatures replayed)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        settings: ModelSettings | None = None,
        retry: RetryPolicy | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int | None = None,
    ) -> None:
        try:
            from anthropic import AsyncAnthropic
        except ImportError as error:
            raise missing_extra("anthropic", "anthropic: models", error) from None
        self.model = model
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        key, url = PROFILE.api_key(api_key), PROFILE.base_url(base_url)
        self._setup(
            settings,
            retry,
            lambda timeout: AsyncAnthropic(
                api_key=key, base_url=url, max_retries=0, timeout=timeout
            ),
        )

    @property
    def name(self) -> str:
        """``anthropic:<model>``."""
        return f"anthropic:{self.model}"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body = request_body(request, self.max_tokens)
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        return body

    async def _create(self, body: dict[str, Any], *, stream: bool = False) -> Any:
        if stream:
            body = {**body, "stream": True}
        return await self.client.messages.create(model=self.model, **body)

    def _parse(self, raw: Any) -> ModelResponse:
        return response_from_blocks(raw)

    def _assembler(self) -> Assembler:
        return StreamAssembler()

    def _translate(self, exc: BaseException) -> Failure | None:
        import anthropic

        return translate_sdk_error(exc, self.name, anthropic)
