"""`FallbackModel`: models tried in order, the next answering when one fails for good.

The models share one call's budget of attempts (``1 + max_retries`` of the first model's
`RetryPolicy`, and at least one per model): a model retries only while an attempt stays kept
for each model after it. A `ModelError` that still escapes —
an HTTP error, a timeout, a connection failure, an unusable or empty response — sends the
same request to the next model. The response says who failed on the way
(`ModelResponse.fallbacks`), and the run reports it as `model_fallback` events. A stream
falls back only while nothing of it was yielded; once deltas went out, a failure is the
stream's error. When every model fails, the last error is raised, naming all of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from ponder.exceptions import ModelError, UserError
from ponder.models.adapter import SDKModel
from ponder.models.base import Fallback, Model, ModelRequest, ModelResponse, StreamEvent
from ponder.models.retry import AttemptBudget, RetryPolicy

__all__ = ["FallbackModel"]


class FallbackModel:
    """A `Model` made of others: the first answers, the next ones when it fails for good."""

    def __init__(self, *models: str | Model, **resolve_options: Any) -> None:
        if not models:
            raise UserError("FallbackModel needs at least one model: FallbackModel('openai:...')")
        from ponder.models.registry import resolve_model

        self.models: tuple[Model, ...] = tuple(
            resolve_model(m, **resolve_options) if isinstance(m, str) else _checked(m)
            for m in models
        )

    @classmethod
    def of(cls, models: Sequence[str | Model], **resolve_options: Any) -> FallbackModel:
        """A fallback model from a list given as ``model=[...]``; `UserError` if it is empty."""
        if not models:
            raise UserError("model=[] names no model: give at least one, e.g. ['openai:...']")
        first, *rest = models
        return cls(first, *rest, **resolve_options)

    @property
    def name(self) -> str:
        """``fallback(<first>, <second>, ...)``."""
        return f"fallback({', '.join(m.name for m in self.models)})"

    def _budget(self) -> AttemptBudget:
        first = getattr(self.models[0], "retry", None)
        budget = AttemptBudget.of(first if isinstance(first, RetryPolicy) else RetryPolicy())
        budget.left = max(budget.left, len(self.models))
        return budget

    def _turn(self, budget: AttemptBudget, index: int) -> dict[str, Any]:
        """The keyword arguments of model ``index``'s call: the shared budget, if it takes one."""
        budget.kept = len(self.models) - index - 1
        return {"budget": budget} if isinstance(self.models[index], SDKModel) else {}

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The first model's answer that did not fail, with the failures before it."""
        failed: list[tuple[str, ModelError]] = []
        budget = self._budget()
        for index, model in enumerate(self.models):
            try:
                response = await model.request(request, **self._turn(budget, index))
            except ModelError as error:
                failed.append((model.name, error))
                continue
            return _noted(response, failed, model.name)
        raise _all_failed(failed)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The first model's stream that did not fail before its first event."""
        failed: list[tuple[str, ModelError]] = []
        budget = self._budget()
        for index, model in enumerate(self.models):
            events = aiter(model.stream(request, **self._turn(budget, index)))
            try:
                first = await anext(events)
            except ModelError as error:
                failed.append((model.name, error))
                continue
            except StopAsyncIteration:
                failed.append((model.name, ModelError(f"{model.name}: the stream was empty")))
                continue
            async for event in _chain(first, events):
                if isinstance(event, ModelResponse):
                    event = _noted(event, failed, model.name)
                yield event
            return
        raise _all_failed(failed)

    async def aclose(self) -> None:
        """Close every model that holds a client."""
        for model in self.models:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def _checked(model: Any) -> Model:
    if not isinstance(model, Model):
        raise UserError(f"FallbackModel takes model strings or Models, got {model!r}")
    return model


async def _chain(
    first: StreamEvent, rest: AsyncIterator[StreamEvent]
) -> AsyncIterator[StreamEvent]:
    yield first
    async for event in rest:
        yield event


def _noted(
    response: ModelResponse, failed: list[tuple[str, ModelError]], answered_by: str
) -> ModelResponse:
    if not failed:
        return response
    notes = tuple(
        Fallback(failed=name, error=f"{type(e).__name__}: {e}"[:500], answered_by=answered_by)
        for name, e in failed
    )
    return response.model_copy(update={"fallbacks": (*response.fallbacks, *notes)})


def _all_failed(failed: list[tuple[str, ModelError]]) -> ModelError:
    """The last model's error, noting that every model failed."""
    last = failed[-1][1]
    last.add_note(f"every fallback model failed: {', '.join(name for name, _ in failed)}")
    return last
