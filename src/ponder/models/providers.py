"""Provider profiles: where an OpenAI-compatible provider lives and what it needs.

A profile names the environment variables for the key and the base URL, the default base
URL, and the provider family's `Capabilities`: what it honours of forced and required
``tool_choice``, parallel calls, ``response_format``, ``content: null``, ``role: tool``
messages, streamed tool calls and replayed reasoning. The capabilities come from each
provider's documentation and, for ``llamacpp``, from the stock llama-cpp-python server
(``--chat_format chatml-function-calling``) as observed: it answers ``"required"`` and a
``json_schema`` response format with HTTP 500, rejects ``content: null``, leaves ``role:
tool`` messages out of the prompt, cannot stream an automatic tool call, dies ("failed
to parse grammar") on a tool schema with a long ``maxLength``, and writes the arguments of
a call it chose under ``"auto"`` without ``max_tokens`` (so every string goes to it with
a ``maxLength`` of at most `ponder.models.capabilities.STRING_CAP`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ponder.exceptions import UserError
from ponder.models.capabilities import Capabilities

__all__ = [
    "ANTHROPIC",
    "KNOWN_PREFIXES",
    "LLAMACPP",
    "PROVIDERS",
    "ProviderProfile",
    "profile_of",
    "provider_profile",
]


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """One provider: its name, key and base-URL variables, defaults and wire quirks."""

    name: str
    key_env: str | None
    base_url_env: str | None = None
    default_base_url: str | None = None
    requires_key: bool = True
    capabilities: Capabilities = field(default_factory=Capabilities)
    placeholder_key: str = "not-needed"
    local: bool = False
    """A server people run themselves: a request it timed out on is not sent again."""
    thought_mode: str | None = None
    """The ``agent_thought_mode`` of a run whose config sets none (None: ponder's default)."""
    instruct_required: bool = True
    """Where ``tool_choice: "required"`` cannot be sent, ask for a tool call in a user
    message at the end of that request (False: send plain ``"auto"``).

    False for ``llamacpp``: the stock llama-cpp-python server's ``auto`` already keeps a
    reply to a tool call or a message by grammar, and on ponder's real-model suite
    (SmolLM2-135M) the instruction made the default mode answer 7 of 22 tasks right
    instead of 12 and moved the end of every prompt, so no request reused the previous
    one's cached prefix past it (mean prefix share 0.80 instead of 0.84)."""

    def api_key(self, given: str | None) -> str:
        """The key from the argument or the environment; `UserError` if a required one is missing.

        A provider that needs no key (a local server) gets a placeholder.
        """
        key = given or (os.environ.get(self.key_env) if self.key_env else None)
        if key:
            return key
        if self.requires_key:
            raise UserError(
                f"no API key for {self.name}: pass api_key=... or set the {self.key_env} "
                "environment variable"
            )
        return self.placeholder_key

    def base_url(self, given: str | None) -> str | None:
        """The base URL from the argument, the environment or the profile's default."""
        env = os.environ.get(self.base_url_env) if self.base_url_env else None
        return given or env or self.default_base_url


LLAMACPP = Capabilities(
    required_tool_choice=False,
    json_schema_output=False,
    null_content=False,
    tool_role=False,
    stream_tool_calls=False,
    length_limits=False,
    vision=False,
    late_system=False,
)
"""The stock llama-cpp-python server; llama.cpp's own ``llama-server --jinja`` does more
(override single features in the config)."""

LOCAL_THOUGHT_MODE = "inline"
"""The thought mode of the local profiles: ``think_and_reason`` offered, never forced.

On a small local model a forced reasoning request costs a request per round and buys no
right answers (``python -m bench.real_model_suite``; bench/RESULTS.md)."""

PROVIDERS: dict[str, ProviderProfile] = {
    "openai": ProviderProfile(
        "openai",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        capabilities=Capabilities(prompt_cache_key=True),
    ),
    "deepseek": ProviderProfile(
        "deepseek",
        "DEEPSEEK_API_KEY",
        "DEEPSEEK_BASE_URL",
        "https://api.deepseek.com",
        capabilities=Capabilities(json_schema_output=False, replays_reasoning=True, vision=False),
    ),
    "ollama": ProviderProfile(
        "ollama",
        None,
        "OLLAMA_BASE_URL",
        "http://127.0.0.1:11434/v1",
        requires_key=False,
        capabilities=Capabilities(forced_tool_choice=False, required_tool_choice=False),
        local=True,
        thought_mode=LOCAL_THOUGHT_MODE,
    ),
    "vllm": ProviderProfile(
        "vllm",
        "VLLM_API_KEY",
        "VLLM_BASE_URL",
        "http://127.0.0.1:8000/v1",
        requires_key=False,
        local=True,
        thought_mode=LOCAL_THOUGHT_MODE,
    ),
    "openrouter": ProviderProfile(
        "openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"
    ),
    "lmstudio": ProviderProfile(
        "lmstudio",
        None,
        "LMSTUDIO_BASE_URL",
        "http://127.0.0.1:1234/v1",
        requires_key=False,
        local=True,
        thought_mode=LOCAL_THOUGHT_MODE,
    ),
    "llamacpp": ProviderProfile(
        "llamacpp",
        None,
        "LLAMACPP_BASE_URL",
        "http://127.0.0.1:8080/v1",
        requires_key=False,
        capabilities=LLAMACPP,
        local=True,
        thought_mode=LOCAL_THOUGHT_MODE,
        instruct_required=False,
    ),
}

KNOWN_PREFIXES = (*PROVIDERS, "anthropic", "scripted")
"""The provider prefixes a model string may start with (``openai:gpt-4o``, ...)."""

ANTHROPIC = ProviderProfile(
    "anthropic",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    capabilities=Capabilities(
        json_schema_output=False, json_object_output=False, replays_reasoning=True
    ),
)
"""Claude: ``tool_choice`` any/tool/none, thinking blocks replayed with their signatures,
structured output through a forced tool."""


def profile_of(model: object) -> ProviderProfile | None:
    """The OpenAI-compatible profile a model string, model or fallback list (its first) names."""
    if isinstance(model, str):
        return PROVIDERS.get(model.strip().partition(":")[0])
    if isinstance(model, list | tuple):
        return profile_of(model[0]) if model else None
    found = getattr(model, "profile", None)
    return found if isinstance(found, ProviderProfile) else None


def provider_profile(name: str | ProviderProfile) -> ProviderProfile:
    """The profile called ``name``; `UserError` listing the known ones otherwise."""
    if isinstance(name, ProviderProfile):
        return name
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise UserError(f"unknown OpenAI-compatible provider {name!r}; known: {known}") from None
