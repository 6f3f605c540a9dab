"""Translating the official SDKs' exceptions into ponder's typed `ModelError` family.

The ``openai`` and ``anthropic`` SDKs share one exception layout (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``, ``APIResponseValidationError``) over httpx2.
"""

from __future__ import annotations

import json
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
        return _status_failure(exc, model_name)
    if isinstance(exc, sdk.APITimeoutError | httpx2.TimeoutException):
        error = ModelTimeoutError(f"{model_name}: request timed out", model_name=model_name)
        return Failure(error, is_retryable=True)
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        detail = f"{model_name}: connection failed ({type(exc).__name__}: {exc})"
        return Failure(ModelConnectionError(detail, model_name=model_name), is_retryable=True)
    if isinstance(exc, json.JSONDecodeError | sdk.APIResponseValidationError | ValidationError):
        message = f"{model_name}: the provider sent a malformed response ({exc})"
        return Failure(ModelResponseError(message, model_name=model_name), is_retryable=False)
    return None


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
