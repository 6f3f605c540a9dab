"""`SDKModel`: the plumbing the OpenAI and Anthropic adapters share.

An adapter says how to build a request body, call its SDK, read a whole response and
fold a stream; this base does the rest: settings merged per request, retries with
backoff inside one total deadline, a bound on the silence between stream chunks
(``ModelSettings.idle_timeout``), typed errors, and provider downgrades: when
`_downgrade` accepts a failure, the request is rebuilt and sent again. Retries and
re-sends share one call's `AttemptBudget`.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from ponder.exceptions import (
    EmptyStreamError,
    ModelConnectionError,
    ModelError,
    ModelResponseError,
    ModelTimeoutError,
)
from ponder.messages import ensure_sendable
from ponder.models.base import ModelDelta, ModelRequest, ModelResponse, ModelSettings, StreamEvent
from ponder.models.clients import LoopClient
from ponder.models.retry import AttemptBudget, Failure, RetryPolicy, call_with_retries
from ponder.models.structured import tool_output_to_text

__all__ = ["DEFAULT_TIMEOUT", "Assembler", "Deadline", "SDKModel"]

DEFAULT_TIMEOUT = 600.0
C = TypeVar("C")
R = TypeVar("R")


class Assembler(Protocol):
    """Folds a provider's stream events into deltas and, at the end, one response."""

    def feed(self, event: Any) -> list[ModelDelta]:
        """Take one stream event; return the deltas it carries."""
        ...

    def finish(self) -> ModelResponse:
        """The complete response; `ModelResponseError` if the stream was cut short."""
        ...

    @property
    def finish_reason(self) -> str | None:
        """Why the provider stopped, once it said so."""
        ...


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a request must be done, and how long the provider may stay silent.

    ``total`` is a `time.monotonic` instant; ``idle`` is seconds between stream chunks
    (or before a whole non-streamed answer); ``seconds`` is the total bound as given.
    """

    total: float
    idle: float | None
    seconds: float

    @classmethod
    def of(cls, settings: ModelSettings) -> Deadline:
        """The deadline of a request sent now with ``settings``."""
        seconds = settings.timeout or DEFAULT_TIMEOUT
        return cls(time.monotonic() + seconds, settings.idle_timeout, seconds)

    def next_chunk(self) -> tuple[float, bool]:
        """The loop-clock instant the next chunk is due, and whether that is the idle bound."""
        remaining = max(self.total - time.monotonic(), 0.0)
        idle = self.idle is not None and self.idle < remaining
        wait = self.idle if idle and self.idle is not None else remaining
        return asyncio.get_running_loop().time() + wait, idle


class SDKModel(ABC, Generic[C]):
    """A model behind an official SDK; subclasses supply the wire format."""

    model: str
    settings: ModelSettings
    retry: RetryPolicy
    _clients: LoopClient[C]

    def _setup(
        self,
        settings: ModelSettings | None,
        retry: RetryPolicy | None,
        factory: Callable[[float], C],
    ) -> None:
        self.settings = settings or ModelSettings()
        self.retry = retry or RetryPolicy()
        timeout = self.settings.timeout or DEFAULT_TIMEOUT
        self._clients = LoopClient(lambda: factory(timeout))

    @property
    def client(self) -> C:
        """The SDK client for the running event loop."""
        return self._clients.get()

    @property
    @abstractmethod
    def name(self) -> str:
        """``<provider>:<model>``."""

    async def request(
        self, request: ModelRequest, *, budget: AttemptBudget | None = None
    ) -> ModelResponse:
        """Send one request (retrying transient failures) and return the whole response.

        It sends at most ``budget``'s requests (by default ``1 + max_retries``), re-sends
        of the request downgraded for the provider included.
        """
        budget = budget or AttemptBudget.of(self.retry)
        body, deadline = self._prepare(request)
        try:
            raw = await self._retrying(partial(self._create, body), deadline, body, budget)
        except ModelError as exc:
            if not self._resend_downgraded(budget, exc, request, stream=False):
                raise
            return await self.request(request, budget=budget)
        return self._readable(lambda: self._finish(self._parse(raw), request))

    async def stream(
        self, request: ModelRequest, *, budget: AttemptBudget | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one request: deltas, then the `ModelResponse` last.

        Failures before the first delta are retried (within ``budget``, as `request`);
        later ones raise a typed error and never yield a half-assembled response.
        """
        budget = budget or AttemptBudget.of(self.retry)
        body, deadline = self._prepare(request)
        try:
            sent = {**body, "stream": True}
            opened = await self._retrying(partial(self._open, body), deadline, sent, budget)
        except ModelError as exc:
            if not self._resend_downgraded(budget, exc, request, stream=True):
                raise
            async for event in self.stream(request, budget=budget):
                yield event
            return
        stream, events, assembler, first = opened
        try:
            for delta in first:
                yield delta
            async for delta in self._rest(events, assembler, deadline):
                yield delta
        finally:
            await stream.close()
        yield self._readable(lambda: self._finish(assembler.finish(), request))

    async def aclose(self) -> None:
        """Close the HTTP client (the model is unusable afterwards)."""
        await self._clients.aclose()

    @abstractmethod
    def _body(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments (settings already merged into ``request``)."""

    @abstractmethod
    async def _create(self, body: dict[str, Any], *, stream: bool = False) -> Any:
        """Call the SDK once."""

    @abstractmethod
    def _parse(self, raw: Any) -> ModelResponse:
        """A `ModelResponse` from the SDK's non-streamed answer."""

    @abstractmethod
    def _assembler(self) -> Assembler:
        """A fresh stream assembler."""

    @abstractmethod
    def _translate(self, exc: BaseException) -> Failure | None:
        """A `Failure` for an SDK or transport exception; ``None`` if not one."""

    def _resend_downgraded(
        self, budget: AttemptBudget, error: ModelError, request: ModelRequest, *, stream: bool
    ) -> bool:
        """Whether to send ``request`` again, downgraded for the feature ``error`` refused.

        A refusal that names its feature (or an adapter's equally sure sign of one) is always
        answered: each feature is turned off once per process. A guess from a bare server
        error spends the call's budget, or its one spare re-send once the budget is spent.
        """
        named = self._names_feature(error, request, stream=stream)
        if not named and not budget.has_attempt and not budget.spare:
            return False
        if not self._downgrade(error, request, stream=stream):
            return False
        if not named and not budget.has_attempt:
            budget.use_spare()
        return True

    def _names_feature(self, error: ModelError, request: ModelRequest, *, stream: bool) -> bool:
        """Whether ``error`` names the request feature it refused (the base: never)."""
        return False

    def _downgrade(self, error: ModelError, request: ModelRequest, *, stream: bool) -> bool:
        """Whether ``error`` was answered by downgrading a feature of the provider.

        When it was, the request is rebuilt and sent again. The base never downgrades.
        """
        return False

    def _may_downgrade(self, body: dict[str, Any]) -> bool:
        """Whether a failure of ``body`` may be answered by a downgrade (the base: never).

        Its retries then keep one attempt of the call's budget for the downgraded re-send.
        """
        return False

    def _translate_for(self, exc: BaseException, body: dict[str, Any]) -> Failure | None:
        """`_translate` for a failure of ``body`` (an adapter may refuse to retry it).

        ``body`` carries ``stream: True`` when the request was streamed.
        """
        return self._translate(exc)

    def _finish(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        response = response.model_copy(update={"model_name": response.model_name or self.model})
        return tool_output_to_text(response, request.output) if request.output else response

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], Deadline]:
        ensure_sendable(request.messages)
        given = request.settings.model_dump(exclude_none=True)
        settings = self.settings.model_copy(update=given) if given else self.settings
        body = self._body(replace(request, settings=settings))
        return body, Deadline.of(settings)

    async def _retrying(
        self,
        attempt: Callable[[], Any],
        deadline: Deadline,
        body: dict[str, Any],
        budget: AttemptBudget,
    ) -> Any:
        policy = self.retry
        if deadline.idle is not None:
            bound = deadline.idle
            if policy.attempt_timeout is not None:
                bound = min(bound, policy.attempt_timeout)
            policy = replace(policy, attempt_timeout=bound)
        return await call_with_retries(
            attempt,
            partial(self._translate_for, body=body),
            policy,
            deadline=deadline.total,
            model_name=self.name,
            budget=budget,
            keep=1 if self._may_downgrade(body) else 0,
        )

    async def _open(
        self, body: dict[str, Any]
    ) -> tuple[Any, AsyncIterator[Any], Assembler, list[ModelDelta]]:
        stream = await self._create(body, stream=True)
        events = aiter(stream)
        assembler = self._assembler()
        try:
            async for event in events:
                first = self._readable(partial(assembler.feed, event))
                if first:
                    return stream, events, assembler, first
        except Exception as exc:
            await stream.close()
            failure = self._translate(exc)
            if failure is not None and isinstance(failure.error, ModelConnectionError):
                raise await self._empty(f"it broke the connection: {exc}") from exc
            raise
        except BaseException:
            await stream.close()
            raise
        await stream.close()
        if assembler.finish_reason is None:
            raise await self._empty("it sent nothing")
        return stream, events, assembler, []

    async def _empty(self, why: str) -> EmptyStreamError:
        """The error for a stream left empty; the SDK client is replaced.

        A server that breaks a stream off tends to close that connection too, and the next
        request on it would fail.
        """
        await self._clients.aclose()
        return EmptyStreamError(
            f"{self.name}: the stream ended before the provider finished the response ({why})",
            model_name=self.name,
        )

    async def _rest(
        self, events: AsyncIterator[Any], assembler: Assembler, deadline: Deadline
    ) -> AsyncIterator[ModelDelta]:
        while True:
            by, idle = deadline.next_chunk()
            try:
                async with asyncio.timeout_at(by):
                    event = await anext(events)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise self._stream_timeout(deadline, idle) from None
            except Exception as exc:
                failure = self._translate(exc)
                if failure is None:
                    raise
                raise failure.error from None
            for delta in self._readable(partial(assembler.feed, event)):
                yield delta

    def _readable(self, read: Callable[[], R]) -> R:
        """``read()``, with a response it cannot make sense of as a `ModelResponseError`.

        The SDKs do not validate what they hand over, so a field of any type reaches the
        wire code; whatever it trips on is the provider's malformed answer.
        """
        try:
            return read()
        except ModelResponseError:
            raise
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            raise ModelResponseError(
                f"{self.name}: the provider sent a response ponder cannot read "
                f"({type(exc).__name__}: {exc})",
                model_name=self.name,
            ) from None

    def _stream_timeout(self, deadline: Deadline, idle: bool) -> ModelTimeoutError:
        if idle:
            message = (
                f"{self.name}: the stream was silent for {deadline.idle:g} s "
                "(the idle bound, llm_timeout)"
            )
        else:
            message = (
                f"{self.name}: the stream did not finish within its total timeout "
                f"of {deadline.seconds:g} s"
            )
        return ModelTimeoutError(message, model_name=self.name)
