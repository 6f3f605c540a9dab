"""Provider profiles: where an OpenAI-compatible provider lives and what it needs.

A profile names the environment variables for the key and the base URL, the default base
URL, and whether the provider wants its reasoning (``reasoning_content``) sent back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ponder.exceptions import UserError

__all__ = ["PROVIDERS", "ProviderProfile", "provider_profile"]


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """One provider: its name, key and base-URL variables, defaults and wire quirks."""

    name: str
    key_env: str | None
    base_url_env: str | None = None
    default_base_url: str | None = None
    requires_key: bool = True
    replays_reasoning: bool = False
    has_json_schema_output: bool = True
    placeholder_key: str = "not-needed"

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


PROVIDERS: dict[str, ProviderProfile] = {
    "openai": ProviderProfile("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "deepseek": ProviderProfile(
        "deepseek",
        "DEEPSEEK_API_KEY",
        "DEEPSEEK_BASE_URL",
        "https://api.deepseek.com",
        replays_reasoning=True,
        has_json_schema_output=False,
    ),
    "ollama": ProviderProfile(
        "ollama", None, "OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1", requires_key=False
    ),
    "vllm": ProviderProfile(
        "vllm", "VLLM_API_KEY", "VLLM_BASE_URL", "http://127.0.0.1:8000/v1", requires_key=False
    ),
    "openrouter": ProviderProfile(
        "openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"
    ),
}


def provider_profile(name: str | ProviderProfile) -> ProviderProfile:
    """The profile called ``name``; `UserError` listing the known ones otherwise."""
    if isinstance(name, ProviderProfile):
        return name
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise UserError(f"unknown OpenAI-compatible provider {name!r}; known: {known}") from None
