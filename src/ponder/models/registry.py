"""Model strings such as ``openai:gpt-4o-mini``, ``anthropic:...`` and ``scripted``.

`resolve_model` turns one into a `Model`; provider adapters are imported on demand.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ponder.exceptions import UserError
from ponder.messages import UserMessage
from ponder.models.base import ForceTool, Model, ModelRequest, ModelResponse, ModelSettings
from ponder.models.providers import KNOWN_PREFIXES
from ponder.models.retry import RetryPolicy
from ponder.models.scripted import ScriptedModel, call_tools, reply

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
        known = ", ".join(p + ":<model>" for p in KNOWN_PREFIXES if p != "scripted")
        raise UserError(
            f"unknown model provider {provider!r} in {spec!r}; "
            f"{_suggestion(spec.strip())}use one of {known} or 'scripted'"
        )
    if not name:
        raise UserError(f"model string {spec!r} names no model; write '{provider}:<model name>'")
    return provider, name


# model names that tell their provider, for a model string given without one
_FAMILIES = (
    (("gpt-", "chatgpt", "o1", "o3", "o4", "text-embedding"), "openai"),
    (("claude",), "anthropic"),
    (("deepseek",), "deepseek"),
)


def _suggestion(spec: str) -> str:
    """``did you mean '...'? `` for a bare model name or a misspelt provider, else ``""``."""
    provider, colon, name = spec.partition(":")
    if colon:
        close = difflib.get_close_matches(provider.lower(), KNOWN_PREFIXES, n=1)
        return f"did you mean '{close[0]}:{name}'? " if close and name else ""
    lowered = spec.lower()
    for prefixes, family in _FAMILIES:
        if lowered.startswith(prefixes):
            return f"did you mean '{family}:{spec}'? "
    return f"a model string names its provider, e.g. 'openai:{spec}'; " if spec else ""


def _echo(request: ModelRequest) -> ModelResponse:
    """The ``scripted`` model string: a well-behaved model that answers with the task.

    It fills a forced ``think_and_reason``, calls ``agent_stop`` when a tool call is
    required, and otherwise replies with the latest user message the runtime did not inject.
    """
    task = next(
        (
            m.content
            for m in reversed(request.messages)
            if isinstance(m, UserMessage) and not m.content.startswith("<BEGIN_OF_")
        ),
        "",
    )
    offered = {tool.name for tool in request.tools}
    called = {c.name for m in request.messages for c in getattr(m, "tool_calls", ())}
    choice = request.tool_choice
    if isinstance(choice, ForceTool) and choice.name == "think_and_reason":
        return call_tools((choice.name, {"last_step": "", "summary": f"Echo the request: {task}"}))
    if choice == "required" and "agent_stop" in offered and "agent_stop" not in called:
        return call_tools(("agent_stop", {"result": task}))
    return reply(task)


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
