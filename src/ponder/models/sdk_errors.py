"""Translating the official SDKs' exceptions into ponder's typed `ModelError` family.

The ``openai`` and ``anthropic`` SDKs share one exception layout (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``, ``APIResponseValidationError``) over httpx2.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from ponder.exceptions import (
    ContextOverflowError,
    EmptyStreamError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
)
from ponder.models.retry import Failure, parse_retry_after, retryable_status

__all__ = ["context_overflow", "translate_sdk_error"]


def translate_sdk_error(exc: BaseException, model_name: str, sdk: ModuleType) -> Failure | None:
    """A `Failure` for an exception from ``sdk`` or its transport; ``None`` if not one."""
    import httpx2

    if isinstance(exc, EmptyStreamError):  # opened, then nothing: maybe a cut, maybe a refusal
        return Failure(exc, is_retryable=True)
    if isinstance(exc, ModelResponseError):
        return Failure(exc, is_retryable=False)
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code < 400:  # an error event inside a stream that began with 200 OK
            return _event_failure(exc, model_name)
        return _status_failure(exc, model_name)
    if isinstance(exc, sdk.APITimeoutError | httpx2.TimeoutException):
        error = ModelTimeoutError(f"{model_name}: request timed out", model_name=model_name)
        return Failure(error, is_retryable=True)
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        detail = f"{model_name}: connection failed ({type(exc).__name__}: {exc})"
        return Failure(ModelConnectionError(detail, model_name=model_name), is_retryable=True)
    if isinstance(exc, ValueError | sdk.APIResponseValidationError | ValidationError):
        # JSONDecodeError, UnicodeDecodeError (a binary body) and the SDK's own validation
        message = (
            f"{model_name}: the provider sent a malformed response ({type(exc).__name__}: {exc})"
        )
        return Failure(ModelResponseError(message, model_name=model_name), is_retryable=False)
    if isinstance(exc, sdk.APIError):  # the OpenAI SDK's error event inside a stream
        return _event_failure(exc, model_name)
    return None


_PERMANENT = ("invalid_request", "authentication", "permission", "not_found", "billing")


def _event_failure(exc: Any, model_name: str) -> Failure:
    """A `ModelResponseError` for an error the provider sent as a stream event.

    Such errors are the provider's own trouble (overloaded, a dropped upstream) unless their
    type says the request itself is wrong, so they are retried.
    """
    body = exc.body
    inner = body.get("error", body) if isinstance(body, dict) else None
    kind = str(inner.get("type") or inner.get("code") or "") if isinstance(inner, dict) else ""
    message = (
        f"{model_name}: the provider reported an error in the stream: {_provider_message(exc)}"
    )
    error = ModelResponseError(message, model_name=model_name)
    return Failure(error, is_retryable=not any(word in kind for word in _PERMANENT))


def _status_failure(exc: Any, model_name: str) -> Failure:
    headers = exc.response.headers
    message = _provider_message(exc)
    overflow = context_overflow(exc.status_code, message, exc.body)
    if overflow is not None:
        limit, prompt = overflow
        error: ModelHTTPError = ContextOverflowError(
            exc.status_code,
            message,
            model_name=model_name,
            body=exc.body,
            limit=limit,
            prompt_tokens=prompt,
        )
        return Failure(error, is_retryable=False)
    error = ModelHTTPError(exc.status_code, message, model_name=model_name, body=exc.body)
    retry_after = parse_retry_after(headers.get("retry-after-ms"))
    if retry_after is not None:
        retry_after /= 1000
    else:
        retry_after = parse_retry_after(headers.get("retry-after"))
    return Failure(error, retryable_status(exc.status_code), retry_after)


def _provider_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)


_OVERFLOW_SIGNS = (
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "exceeds the available context size",
    "exceed_context_size",
    "exceeds the context window",
    "exceed context limit",
    "context window",
    "prompt is too long",
    "context length of only",
)
_LIMIT = re.compile(
    r"maximum context length is (\d+)|context length of only (\d+)|(\d+) maximum\b|> (\d+),"
)
_PROMPT = re.compile(
    r"\((\d+) in the messages|request has (\d+) input tokens|messages resulted in (\d+) tokens"
    r"|prompt is too long: (\d+) tokens|keep the first (\d+) tokens|context limit: (\d+) \+"
)


def context_overflow(status: int, message: str, body: Any) -> tuple[int | None, int | None] | None:
    """``(limit, prompt_tokens)`` if a 4xx says the prompt overflowed the context window.

    Reads the shapes real servers send: OpenAI's ``context_length_exceeded`` code, vLLM's and
    llama-cpp-python's "maximum context length is N tokens … (M in the messages …)",
    llama.cpp's ``exceed_context_size_error`` with ``n_ctx`` and ``n_prompt_tokens``,
    Anthropic's "prompt is too long: M tokens > N maximum" and LM Studio's "context length
    of only N tokens". Either number is ``None`` when the server did not give it.
    """
    if not 400 <= status < 500:
        return None
    inner = body.get("error", body) if isinstance(body, dict) else None
    fields = inner if isinstance(inner, dict) else {}
    kind = f"{fields.get('type') or ''} {fields.get('code') or ''}".lower()
    text = message.lower()
    if not any(sign in text or sign in kind for sign in _OVERFLOW_SIGNS):
        return None
    limit, prompt = _number(fields.get("n_ctx")), _number(fields.get("n_prompt_tokens"))
    if limit is None and (found := _LIMIT.search(text)):
        limit = _number(next(g for g in found.groups() if g))
    if prompt is None and (found := _PROMPT.search(text)):
        prompt = _number(next(g for g in found.groups() if g))
    return limit, prompt


def _number(value: Any) -> int | None:
    """A positive token count from a JSON value or a matched string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | str) and str(value).isdigit() and int(value) > 0:
        return int(value)
    return None
