"""`AnthropicModel`: Claude through the official ``anthropic`` SDK (``ponder[anthropic]``).

The SDK is imported when a model is created, never at ``import ponder.models``. One client
per model instance with the SDK's retries off; ponder retries and types errors itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from ponder.exceptions import ModelTimeoutError, UserError
from ponder.messages import ensure_sendable
from ponder.models.anthropic_wire import StreamAssembler, request_body, response_from_blocks
from ponder.models.base import ModelDelta, ModelRequest, ModelResponse, ModelSettings, StreamEvent
from ponder.models.clients import LoopClient
from ponder.models.providers import ProviderProfile
from ponder.models.retry import Failure, RetryPolicy, call_with_retries
from ponder.models.sdk_errors import translate_sdk_error
from ponder.models.structured import tool_output_to_text

__all__ = ["AnthropicModel"]

DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_TOKENS = 4096
PROFILE = ProviderProfile("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


class AnthropicModel:
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
        except ImportError:
            raise UserError(
                "anthropic models need the anthropic SDK: pip install 'ponder[anthropic]'"
            ) from None
        self.model = model
        self.settings = settings or ModelSettings()
        self.retry = retry or RetryPolicy()
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        key, url = PROFILE.api_key(api_key), PROFILE.base_url(base_url)
        timeout = self.settings.timeout or DEFAULT_TIMEOUT
        self._clients: LoopClient[Any] = LoopClient(
            lambda: AsyncAnthropic(api_key=key, base_url=url, max_retries=0, timeout=timeout)
        )

    @property
    def client(self) -> Any:
        """The SDK client for the running event loop."""
        return self._clients.get()

    @property
    def name(self) -> str:
        """``anthropic:<model>``."""
        return f"anthropic:{self.model}"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request (retrying transient failures) and return the whole response."""
        body, deadline = self._prepare(request)
        message = await call_with_retries(
            lambda: self.client.messages.create(model=self.model, **body),
            self._translate,
            self.retry,
            deadline=deadline,
            model_name=self.name,
        )
        return self._finish(response_from_blocks(message), request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one request: deltas, then the `ModelResponse`.

        Failures after the first delta raise a typed error, never a half-assembled response.
        """
        body, deadline = self._prepare(request)
        stream, events, assembler, first = await call_with_retries(
            lambda: self._open_stream(body),
            self._translate,
            self.retry,
            deadline=deadline,
            model_name=self.name,
        )
        try:
            for delta in first:
                yield delta
            async for delta in self._rest(events, assembler, deadline):
                yield delta
        finally:
            await stream.close()
        yield self._finish(assembler.finish(), request)

    async def aclose(self) -> None:
        """Close the HTTP client (the model is unusable afterwards)."""
        await self._clients.aclose()

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], float]:
        ensure_sendable(request.messages)
        given = request.settings.model_dump(exclude_none=True)
        settings = self.settings.model_copy(update=given) if given else self.settings
        body = request_body(replace(request, settings=settings), self.max_tokens)
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        return body, time.monotonic() + (settings.timeout or DEFAULT_TIMEOUT)

    def _finish(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        response = response.model_copy(update={"model_name": response.model_name or self.model})
        return tool_output_to_text(response, request.output) if request.output else response

    async def _open_stream(
        self, body: dict[str, Any]
    ) -> tuple[Any, AsyncIterator[Any], StreamAssembler, list[ModelDelta]]:
        stream = await self.client.messages.create(model=self.model, stream=True, **body)
        events = aiter(stream)
        assembler = StreamAssembler()
        try:
            async for event in events:
                first = assembler.feed(event)
                if first:
                    return stream, events, assembler, first
        except BaseException:
            await stream.close()
            raise
        return stream, events, assembler, []

    async def _rest(
        self, events: AsyncIterator[Any], assembler: StreamAssembler, deadline: float
    ) -> AsyncIterator[ModelDelta]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with asyncio.timeout_at(loop.time() + max(deadline - time.monotonic(), 0)):
                    event = await anext(events)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ModelTimeoutError(
                    f"{self.name}: the stream did not finish within its total timeout",
                    model_name=self.name,
                ) from None
            except Exception as exc:
                failure = self._translate(exc)
                if failure is None:
                    raise
                raise failure.error from None
            for delta in assembler.feed(event):
                yield delta

    def _translate(self, exc: BaseException) -> Failure | None:
        import anthropic

        return translate_sdk_error(exc, self.name, anthropic)
