"""Model strings such as ``openai:gpt-4o-mini``, ``anthropic:...`` and ``scripted``.

`resolve_model` turns one into a `Model`; provider adapters are imported on demand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ponder.exceptions import UserError
from ponder.messages import UserMessage
from ponder.models.base import Model, ModelRequest, ModelSettings
from ponder.models.providers import KNOWN_PREFIXES
from ponder.models.retry import RetryPolicy
from ponder.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from ponder.config import AgentConfig

__all__ = ["KNOWN_PREFIXES", "resolve_configured", "resolve_model"]


def resolve_model(
    spec: str | Model,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    settings: ModelSettings | None = None,
    retry: RetryPolicy | None = None,
    capabilities: Mapping[str, bool] | None = None,
) -> Model:
    """A `Model` for ``spec`` (a model string or a model, returned as is).

    Keys and base URLs come from the arguments or the provider's usual environment
    variables; an unknown provider or a missing key raises `UserError` saying what to set.
    ``capabilities`` overrides single features of an OpenAI-compatible provider's profile.
    """
    if not isinstance(spec, str):
        if isinstance(spec, Model):
            return spec
        raise UserError(f"a model is a string like 'openai:gpt-4o-mini' or a Model, got {spec!r}")
    provider, name = _split(spec)
    if provider == "scripted":
        return ScriptedModel(_echo, name="scripted")
    options: dict[str, Any] = {
        "api_key": api_key,
        "base_url": base_url,
        "settings": settings,
        "retry": retry,
    }
    if provider == "anthropic":
        from ponder.models.anthropic import AnthropicModel

        return AnthropicModel(name, **options)
    from ponder.models.openai import OpenAIModel

    return OpenAIModel(name, provider=provider, capabilities=capabilities, **options)


def _split(spec: str) -> tuple[str, str]:
    """``provider:name``, checked: a known provider and a model name."""
    provider, _, name = spec.strip().partition(":")
    if provider == "scripted":
        return provider, name
    if provider not in KNOWN_PREFIXES:
        raise UserError(
            f"unknown model provider {provider!r} in {spec!r}; use one of "
            f"{', '.join(p + ':<model>' for p in KNOWN_PREFIXES if p != 'scripted')} or 'scripted'"
        )
    if not name:
        raise UserError(f"model string {spec!r} names no model; write '{provider}:<model name>'")
    return provider, name


def _echo(request: ModelRequest) -> str:
    """The ``scripted`` model string: answer by echoing the latest user message."""
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            return message.content
    return ""


def resolve_configured(spec: str | Model | Sequence[str | Model], config: AgentConfig) -> Model:
    """The model an agent's ``model`` names, with the config's key, URL, timeouts, retries.

    A list is a `FallbackModel`; each of its strings takes its provider's key and base URL.
    """
    from ponder.models.fallback import FallbackModel

    settings = ModelSettings(timeout=config.llm_total_timeout, idle_timeout=config.llm_timeout)
    retry = RetryPolicy(max_retries=config.max_retries)
    if isinstance(spec, str | Model):
        return resolve_model(
            spec,
            api_key=config.api_key,
            base_url=config.base_url,
            settings=settings,
            retry=retry,
            capabilities=config.model_capabilities or None,
        )
    if not isinstance(spec, Sequence):
        raise UserError(f"model must be a model string, a Model or a list of them: {spec!r}")
    return FallbackModel.of(list(spec), settings=settings, retry=retry)
