"""Retrying provider calls: exponential backoff with full jitter, Retry-After, a deadline.

Adapters translate SDK exceptions into a `Failure` (a typed ponder error plus whether it
may be retried and the server's Retry-After); `call_with_retries` does the rest. One model
call sends at most ``1 + max_retries`` requests in all (an `AttemptBudget`): its retries,
the re-sends of a request downgraded for the provider and a fallback chain's models share it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from ponder.exceptions import ModelError, ModelTimeoutError

__all__ = [
    "AttemptBudget",
    "Failure",
    "RetryPolicy",
    "call_with_retries",
    "parse_retry_after",
    "retryable_status",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry: ``max_retries`` after the first attempt.

    ``attempt_timeout`` bounds one attempt (a timed-out attempt is retried); the total
    timeout of a request is the adapter's and bounds all attempts and waits together.
    """

    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 20.0
    retry_after_cap: float = 60.0
    attempt_timeout: float | None = None
    retry_timeouts: bool = True
    """Send a timed-out attempt again; off for a local server, which is still busy with it
    (a second copy would only queue behind the first)."""

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap)
        ceiling = min(self.backoff_cap, self.backoff_base * 2 ** (retry - 1))
        return random.uniform(ceiling / 2, ceiling)


class AttemptBudget:
    """The requests one model call may still send, across retries, re-sends and fallbacks.

    ``kept`` attempts are held back for what comes after the current request (the next
    models of a fallback chain, a downgraded re-send): retries never spend them. ``spare``
    is one downgraded re-send the call may send once its attempts are spent (with
    ``max_retries = 0`` a server that refuses a feature with a bare error is still
    answered, as the stock llama.cpp server does ``tool_choice: "required"``).
    """

    __slots__ = ("kept", "left", "spare")

    def __init__(self, attempts: int) -> None:
        self.left = attempts
        self.kept = 0
        self.spare = True

    def use_spare(self) -> None:
        """Spend the spare re-send (one more attempt; there is no second spare)."""
        self.spare = False
        self.left += 1

    @classmethod
    def of(cls, policy: RetryPolicy) -> AttemptBudget:
        """The budget of a call made with ``policy``: the first attempt and its retries."""
        return cls(1 + max(policy.max_retries, 0))

    def may_retry(self, keep: int = 0) -> bool:
        """True if a retry leaves the held-back attempts (and ``keep`` more) unspent."""
        return self.left > self.kept + keep

    @property
    def has_attempt(self) -> bool:
        """True while one more request may be sent (a re-send, the next model's first)."""
        return self.left > 0


@dataclass(frozen=True, slots=True)
class Failure:
    """A provider failure translated for the retry loop."""

    error: ModelError
    is_retryable: bool
    retry_after: float | None = None


def retryable_status(status: int) -> bool:
    """HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors."""
    return status in (408, 409, 429) or status >= 500


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` / ``retry-after-ms`` style header value."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    translate: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    *,
    deadline: float,
    model_name: str,
    budget: AttemptBudget | None = None,
    keep: int = 0,
) -> T:
    """Run ``attempt`` until it succeeds, retrying retryable failures before ``deadline``.

    ``deadline`` is a `time.monotonic` instant; past it a `ModelTimeoutError` is raised.
    Exceptions ``translate`` does not recognise propagate unchanged. Each attempt spends
    one of ``budget`` (the call's, by default a fresh one of ``policy``); retries leave
    ``keep`` attempts of it unspent, for a re-send of the request downgraded.
    """
    budget = budget or AttemptBudget.of(policy)
    retry = 0
    while True:
        budget.left -= 1
        try:
            return await _one_attempt(attempt, policy, deadline)
        except _AttemptTimeout:
            failure: Failure | None = Failure(
                ModelTimeoutError(_timed_out(model_name, policy), model_name=model_name),
                is_retryable=policy.retry_timeouts,
            )
        except TimeoutError:
            raise _timeout(model_name, deadline) from None
        except Exception as exc:
            failure = translate(exc)
            if failure is None:
                raise
        assert failure is not None
        if isinstance(failure.error, ModelTimeoutError) and not policy.retry_timeouts:
            failure = Failure(failure.error, is_retryable=False)
        retry += 1
        wait = policy.delay(retry, failure.retry_after)
        if not failure.is_retryable or retry > policy.max_retries or not budget.may_retry(keep):
            raise failure.error from None
        if time.monotonic() + wait >= deadline:
            raise _out_of_time(model_name, deadline, failure) from None
        await asyncio.sleep(wait)


class _AttemptTimeout(Exception):
    pass


def _timed_out(model_name: str, policy: RetryPolicy) -> str:
    if policy.retry_timeouts:
        return f"{model_name}: one attempt timed out"
    return (
        f"{model_name}: the request timed out and was not sent again: a local server is "
        "still working on it (raise llm_timeout for a slow model)"
    )


async def _one_attempt(
    attempt: Callable[[], Awaitable[T]], policy: RetryPolicy, deadline: float
) -> T:
    remaining = max(deadline - time.monotonic(), 0.0)
    limit = remaining if policy.attempt_timeout is None else min(remaining, policy.attempt_timeout)
    try:
        async with asyncio.timeout(limit):
            return await attempt()
    except TimeoutError:
        if limit < remaining:
            raise _AttemptTimeout from None
        raise


def _out_of_time(model_name: str, deadline: float, failure: Failure) -> ModelTimeoutError:
    if failure.retry_after is None:
        return _timeout(model_name, deadline, failure.error)
    left = max(deadline - time.monotonic(), 0.0)
    return ModelTimeoutError(
        f"{model_name}: the provider asked to retry after {failure.retry_after:g} s, longer "
        f"than the {left:.1f} s left of the request's total timeout (llm_total_timeout); "
        f"last error: {failure.error}",
        model_name=model_name,
    )


def _timeout(model_name: str, deadline: float, last: ModelError | None = None) -> ModelTimeoutError:
    detail = f" (last error: {last})" if last else ""
    return ModelTimeoutError(
        f"{model_name}: the request did not complete within its total timeout{detail}",
        model_name=model_name,
    )
