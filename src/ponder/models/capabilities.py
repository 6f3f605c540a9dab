"""What a provider honours, per provider family, and what was learned at run time.

A `Capabilities` value says which request features a provider accepts and obeys. Each
provider family has one (see `ponder.models.providers`); a config may override single
features (``model_capabilities = {required_tool_choice = false}``). What a profile does
not know is learned from the provider's errors: `learn` records a feature as unsupported
for one (provider, base URL, model) for the rest of the process, and `effective` folds
the profile, the overrides and what was learned into the capabilities to send with.
`learn_window` keeps the context window a provider's overflow error named, per model name,
so the next run compacts before it would overflow.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Literal, get_args

from ponder.exceptions import UserError

__all__ = [
    "FEATURES",
    "STRING_CAP",
    "Capabilities",
    "Feature",
    "effective",
    "forget_learned",
    "learn",
    "learn_window",
    "learned",
    "learned_window",
    "string_cap",
]

Feature = Literal[
    "forced_tool_choice",
    "required_tool_choice",
    "parallel_tool_calls",
    "json_schema_output",
    "json_object_output",
    "null_content",
    "tool_role",
    "stream_tool_calls",
    "length_limits",
    "replays_reasoning",
    "vision",
    "late_system",
    "prompt_cache_key",
]
FEATURES: tuple[Feature, ...] = get_args(Feature)


STRING_CAP = 1000
"""The longest string argument a tool schema lets a server without ``length_limits`` write.

The stock llama-cpp-python server writes the arguments of a call it chose under
``tool_choice: "auto"`` without ``max_tokens``: only the grammar it builds from the schema
ends a string, so a model that rambles inside one fills the whole window and the server
refuses its own prompt. Its grammar parser dies on limits much past this (2,000 does)."""


def string_cap(max_tokens: int | None) -> int:
    """The longest string argument asked of a server without ``length_limits``.

    `STRING_CAP`, or four characters a token of the request's ``max_tokens`` when that is
    less: what a server honouring ``max_tokens`` would let the model write in one string.
    """
    return STRING_CAP if max_tokens is None else min(STRING_CAP, 4 * max_tokens)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Which request features a provider honours (True) or refuses or ignores (False).

    - ``forced_tool_choice``: a named ``tool_choice`` is obeyed;
    - ``required_tool_choice``: ``tool_choice: "required"`` is accepted;
    - ``parallel_tool_calls``: one response may carry several calls;
    - ``json_schema_output`` / ``json_object_output``: ``response_format`` of that type;
    - ``null_content``: an assistant message with calls may have ``content: null``;
    - ``tool_role``: ``role: tool`` messages reach the model;
    - ``stream_tool_calls``: streaming works with tools offered and ``tool_choice`` auto;
    - ``length_limits``: tool schemas may carry any ``maxLength`` / ``minLength``; without
      it every string goes with a ``maxLength`` of at most `STRING_CAP` and no
      ``minLength`` (llama.cpp expands them into a grammar that breaks the server for
      long limits);
    - ``replays_reasoning``: the provider wants ``reasoning_content`` sent back;
    - ``vision``: user messages may carry images;
    - ``late_system``: a system message later in the conversation (the round's reasoning)
      goes as one; otherwise as a user message (the stock llama-cpp-python template appends
      the whole tool list to every system message, so each round's grew the prompt by it);
    - ``prompt_cache_key``: requests carry OpenAI's ``prompt_cache_key`` naming their stable
      prefix (only the ``openai`` profile; a server that refuses the field turns it off).
    """

    forced_tool_choice: bool = True
    required_tool_choice: bool = True
    parallel_tool_calls: bool = True
    json_schema_output: bool = True
    json_object_output: bool = True
    null_content: bool = True
    tool_role: bool = True
    stream_tool_calls: bool = True
    length_limits: bool = True
    replays_reasoning: bool = False
    vision: bool = True
    late_system: bool = True
    prompt_cache_key: bool = False

    def without(self, *features: Feature) -> Capabilities:
        """A copy with ``features`` turned off."""
        return replace(self, **dict.fromkeys(features, False))

    def updated(self, overrides: Mapping[str, bool]) -> Capabilities:
        """A copy with single features set; `UserError` naming an unknown feature."""
        unknown = sorted(set(overrides) - set(FEATURES))
        if unknown:
            raise UserError(
                f"unknown model capability {unknown[0]!r}; known: {', '.join(FEATURES)}"
            )
        return replace(self, **{k: bool(v) for k, v in overrides.items()})

    def missing(self) -> tuple[Feature, ...]:
        """The features this provider does not honour."""
        return tuple(f.name for f in fields(self) if not getattr(self, f.name))  # type: ignore[misc]


Key = tuple[str, str | None, str]
_LEARNED: dict[Key, set[Feature]] = {}
_WINDOWS: dict[str, int] = {}
_LOCK = threading.Lock()


def learn(key: Key, feature: Feature) -> bool:
    """Record ``feature`` as unsupported for ``key``; False if it was known already."""
    with _LOCK:
        known = _LEARNED.setdefault(key, set())
        if feature in known:
            return False
        known.add(feature)
        return True


def learned(key: Key) -> frozenset[Feature]:
    """What was learned for ``key`` so far in this process."""
    with _LOCK:
        return frozenset(_LEARNED.get(key, ()))


def learn_window(model_name: str, tokens: int) -> None:
    """Record ``tokens`` as the context window the provider enforces for ``model_name``."""
    with _LOCK:
        _WINDOWS[model_name] = tokens


def learned_window(model_name: str) -> int:
    """The context window learned for ``model_name`` in this process; 0 if none was."""
    return _WINDOWS.get(model_name, 0)


def forget_learned() -> None:
    """Forget everything learned (for tests and long-lived processes that changed server)."""
    with _LOCK:
        _LEARNED.clear()
        _WINDOWS.clear()


def effective(base: Capabilities, key: Key) -> Capabilities:
    """``base`` minus what was learned for ``key``."""
    found = learned(key)
    return base.without(*found) if found else base
