"""`OpenAIModel`: any OpenAI-compatible chat-completions provider, via the official SDK.

One ``AsyncOpenAI`` client per model instance, with the SDK's own retries off: ponder
retries 429 / 5xx / connection errors / timeouts itself (see `RetryPolicy`) inside one
total timeout, and every failure surfaces as a typed `ModelError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ponder.exceptions import ModelTimeoutError
from ponder.messages import ensure_sendable
from ponder.models.base import ModelDelta, ModelRequest, ModelResponse, ModelSettings, StreamEvent
from ponder.models.clients import LoopClient
from ponder.models.openai_wire import StreamAssembler, request_body, response_from_message
from ponder.models.providers import ProviderProfile, provider_profile
from ponder.models.retry import Failure, RetryPolicy, call_with_retries
from ponder.models.sdk_errors import translate_sdk_error
from ponder.models.structured import tool_output_to_text

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIModel"]

DEFAULT_TIMEOUT = 600.0


class OpenAIModel:
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
        self.settings = settings or ModelSettings()
        self.retry = retry or RetryPolicy()
        key, url = self.profile.api_key(api_key), self.profile.base_url(base_url)
        timeout = self.settings.timeout or DEFAULT_TIMEOUT
        self._clients: LoopClient[AsyncOpenAI] = LoopClient(
            lambda: AsyncOpenAI(api_key=key, base_url=url, max_retries=0, timeout=timeout)
        )

    @property
    def client(self) -> AsyncOpenAI:
        """The SDK client for the running event loop."""
        return self._clients.get()

    @property
    def name(self) -> str:
        """``<provider>:<model>``."""
        return f"{self.profile.name}:{self.model}"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request (retrying transient failures) and return the whole response."""
        body, deadline = self._prepare(request)
        completion = await call_with_retries(
            lambda: self.client.chat.completions.create(model=self.model, **body),
            self._translate,
            self.retry,
            deadline=deadline,
            model_name=self.name,
        )
        return self._finish(response_from_message(completion, self.profile), request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one request: deltas, then the `ModelResponse`.

        Failures before the first delta are retried; later ones raise a typed error and
        never yield a half-assembled response.
        """
        body, deadline = self._prepare(request)
        body["stream_options"] = {"include_usage": True}
        opened = await call_with_retries(
            lambda: self._open_stream(body),
            self._translate,
            self.retry,
            deadline=deadline,
            model_name=self.name,
        )
        stream, chunks, assembler, first = opened
        try:
            for delta in first:
                yield delta
            async for delta in self._rest(chunks, assembler, deadline):
                yield delta
        finally:
            await stream.close()
        yield self._finish(assembler.finish(), request)

    async def aclose(self) -> None:
        """Close the HTTP client (the model is unusable afterwards)."""
        await self._clients.aclose()

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], float]:
        ensure_sendable(request.messages)
        settings = _merge(self.settings, request.settings)
        body = request_body(_with_settings(request, settings), self.profile)
        return body, time.monotonic() + (settings.timeout or DEFAULT_TIMEOUT)

    def _finish(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        response = response.model_copy(update={"model_name": response.model_name or self.model})
        if request.output is not None and not self.profile.has_json_schema_output:
            return tool_output_to_text(response, request.output)
        return response

    async def _open_stream(
        self, body: dict[str, Any]
    ) -> tuple[Any, AsyncIterator[Any], StreamAssembler, list[ModelDelta]]:
        stream = await self.client.chat.completions.create(model=self.model, stream=True, **body)
        chunks = aiter(stream)
        assembler = StreamAssembler(self.profile)
        try:
            async for chunk in chunks:
                first = assembler.feed(chunk)
                if first:
                    return stream, chunks, assembler, first
        except BaseException:
            await stream.close()
            raise
        return stream, chunks, assembler, []

    async def _rest(
        self, chunks: AsyncIterator[Any], assembler: StreamAssembler, deadline: float
    ) -> AsyncIterator[ModelDelta]:
        while True:
            try:
                async with asyncio.timeout_at(_loop_deadline(deadline)):
                    chunk = await anext(chunks)
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
            for delta in assembler.feed(chunk):
                yield delta

    def _translate(self, exc: BaseException) -> Failure | None:
        return translate_error(exc, self.name)


def translate_error(exc: BaseException, model_name: str) -> Failure | None:
    """A `Failure` for an exception raised by the ``openai`` SDK or its transport."""
    import openai

    return translate_sdk_error(exc, model_name, openai)


def _merge(base: ModelSettings, override: ModelSettings) -> ModelSettings:
    given = override.model_dump(exclude_none=True)
    return base.model_copy(update=given) if given else base


def _with_settings(request: ModelRequest, settings: ModelSettings) -> ModelRequest:
    return replace(request, settings=settings)


def _loop_deadline(deadline: float) -> float:
    return asyncio.get_running_loop().time() + max(deadline - time.monotonic(), 0.0)
