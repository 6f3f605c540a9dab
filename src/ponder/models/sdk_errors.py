"""Translating the official SDKs' exceptions into ponder's typed `ModelError` family.

The ``openai`` and ``anthropic`` SDKs share one exception layout (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``, ``APIResponseValidationError``) over httpx2.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from pydantic import ValidationError

from ponder.exceptions import (
    EmptyStreamError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
)
from ponder.models.retry import Failure, parse_retry_after, retryable_status

__all__ = ["translate_sdk_error"]


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
    error = ModelHTTPError(
        exc.status_code, _provider_message(exc), model_name=model_name, body=exc.body
    )
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
