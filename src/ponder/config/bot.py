"""The existing bot's ``config.toml`` (AmritaBot over AmritaCore), in both of its layouts.

Current layout: Core's own tables under ``[core]`` (``function_config``, ``builtin``,
``builtin.react_config``, ``llm``, ``cookie``), the chat plugin's ``[llm]`` and
``[llm.tools]``, and ``[default_preset]`` (with ``[default_preset.config]``). Old layout
(no ``[core]``): Core's keys sit under ``[llm]`` and ``[llm.tools]``, the cookie under
``[cookies]``. `flatten_document` turns either into one flat mapping of ``AgentConfig``
keys; every key it does not map is named in a note (the caller warns), never dropped
silently. Later tables win: old locations, then ``[core]``, then ``[default_preset]``
(the bot's preset values win over ``[core.llm]``'s fallbacks), then ponder's own keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ponder.models.providers import KNOWN_PREFIXES

__all__ = ["BOT_ONLY", "RENAMED", "SECTIONS", "closest_key", "flatten_document"]

SECTIONS: tuple[tuple[str, ...], ...] = (
    ("llm",),
    ("llm", "tools"),
    ("cookies",),
    ("core", "function_config"),
    ("core", "builtin"),
    ("core", "builtin", "react_config"),
    ("core", "llm"),
    ("core", "cookie"),
    ("default_preset",),
    ("default_preset", "config"),
    ("agent",),
)
"""Tables read, in the order they are applied."""

BOT_ONLY = frozenset(
    {
        "admin",
        "autoreply",
        "enable",
        "extended",
        "extra",
        "function",
        "group_prompt_character",
        "parse_segments",
        "preset_extension",
        "private_prompt_character",
        "session",
        "usage_limit",
    }
)
"""The chat plugin's own top-level settings: messaging, not the agent."""

_NO_CANARY = "ponder has no prompt-leak canary"
_NO_EFFECT: dict[str, str] = {
    "agent_tool_call_notice": "tool calls are always typed events; filter the stream instead",
    "agent_reasoning_hide": "reasoning is always a typed event; filter the stream instead",
    "tokens_count_mode": "token counts come from the provider's usage",
    "enable_tokens_limit": "the window is always enforced by compaction",
    "memory_abstract_proportion": "compaction keeps about half of the trigger window",
    "max_fallbacks": "fallbacks are the models listed in 'model' (a list), tried in order",
    "enable_overflow_recovery": "ponder compacts before the window is reached",
    "enable_multi_modal": "images and files are always accepted; a model without vision is "
    "refused before its request (model_capabilities = {vision = true} overrides)",
    "stream": "streaming is chosen per call: Agent.stream() or the CLI's live view",
    "enable_tools": "tools are offered whenever they are registered",
    "agent_mode_enable": "agent mode follows tool_calling_mode",
    "enable_cookie": _NO_CANARY,
    "cookie": _NO_CANARY,
    "name": "a preset's name only identifies it",
    "protocol": "it chose the model string's provider",
    "top_k": "not sent by ponder",
    "top_p": "not sent by ponder",
    "multimodal": "the provider's profile says whether the model sees images "
    "(model_capabilities = {vision = true} overrides)",
    "cot_model": "reasoning is read from the provider's reasoning fields",
    "thinking_config": "a provider's reasoning is replayed as it arrives",
    "rate": "prices come from the genai-prices table (the 'cost' extra)",
    "extra": "free-form preset data",
    "validate_tool_arguments": "ponder always checks tool arguments against their schema",
    "reasoning_aware_tools": "ponder keeps the offered tools in a stable order",
}
_RENAMED = {
    "block_msg": "report_block_message",
    "enable_memory_abstract": "enable_compaction",
    "max_context": "session_tokens_windows",
    "max_output": "max_tokens",
}
RENAMED = _RENAMED
"""The bot's names of keys ponder calls otherwise (bot name → ponder key)."""
Notes = list[str]
Special = Callable[[Any, dict[str, Any], Notes], None]


def _require_tools(value: Any, values: dict[str, Any], notes: Notes) -> None:
    if value is False:
        notes.append(
            "require_tools = false is not applied: ponder requires a tool call in every "
            "action request until agent_stop (its stop protocol)"
        )


def _auto_retry(value: Any, values: dict[str, Any], notes: Notes) -> None:
    if value is False:
        values["_auto_retry_off"] = True


_SPECIAL: dict[str, Special] = {"require_tools": _require_tools, "auto_retry": _auto_retry}


def _table(document: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any]:
    table: Any = document
    for part in path:
        table = table.get(part, {}) if isinstance(table, Mapping) else {}
    return table if isinstance(table, Mapping) else {}


def _preset_model(value: Any, protocol: Any) -> Any:
    """The bot's preset ``model`` as a ponder model string (``auto`` or empty: none)."""
    if not isinstance(value, str):
        return value
    if value.strip() in ("", "auto"):
        return None
    if value.partition(":")[0] in KNOWN_PREFIXES:
        return value
    provider = "anthropic" if protocol == "anthropic" else "openai"
    return f"{provider}:{value}"


def _apply_preset(table: Mapping[str, Any], values: dict[str, Any], notes: Notes) -> set[str]:
    """``[default_preset]``'s model, base URL and key; returns the keys it took."""
    taken = {"model", "base_url", "api_key"}
    if "model" in table:
        model = _preset_model(table["model"], table.get("protocol", "__main__"))
        if model is not None:
            values["model"] = model
    for key in ("base_url", "api_key"):
        if isinstance(table.get(key), str) and table[key]:
            values[key] = table[key]
    protocol = table.get("protocol", "__main__")
    if protocol not in ("__main__", "openai", "anthropic"):
        notes.append(f"[default_preset] protocol {protocol!r} unknown; the OpenAI wire is used")
    return taken


def _section_name(path: tuple[str, ...]) -> str:
    return "[" + ".".join(path) + "]"


def _read_section(
    path: tuple[str, ...],
    table: Mapping[str, Any],
    fields: Collection[str],
    values: dict[str, Any],
    notes: Notes,
) -> None:
    taken = _apply_preset(table, values, notes) if path == ("default_preset",) else set()
    subtables = {p[len(path)] for p in SECTIONS if p[: len(path)] == path and len(p) > len(path)}
    ignored: list[str] = []
    for key, value in table.items():
        if key in taken or key in subtables:
            continue
        if key in _SPECIAL:
            _SPECIAL[key](value, values, notes)
        elif key in _RENAMED:
            values[_RENAMED[key]] = value
        elif key in fields and (
            not isinstance(value, Mapping)
            or key in ("agent_mcp_server_scripts", "model_capabilities")
        ):
            values[key] = value
        elif key in _NO_EFFECT:
            ignored.append(f"{key} ({_NO_EFFECT[key]})")
        else:
            suggestion = closest_key(key, [*fields, *_RENAMED])
            notes.append(
                f"unknown configuration key {key!r} in {_section_name(path)} ignored{suggestion}"
            )
    if ignored:
        notes.append(f"{_section_name(path)} keys without effect in ponder: {'; '.join(ignored)}")


_TABLE_FIELDS = ("agent_mcp_server_scripts", "model_capabilities")


def _top_level(
    document: Mapping[str, Any], fields: Collection[str], values: dict[str, Any], notes: Notes
) -> None:
    roots = {path[0] for path in SECTIONS}
    bot_only = sorted(key for key in document if key in BOT_ONLY)
    for key, value in document.items():
        if key in roots or key in BOT_ONLY:
            continue
        if key == "preset":
            if value != "default":
                notes.append(
                    f"preset = {value!r} names a file of the bot's models/ folder, which ponder "
                    "does not read; [default_preset] is used"
                )
            continue
        values[key] = value  # ponder's flat layout; unknown names are warned about later
    if bot_only:
        notes.append(
            f"the bot's chat-plugin settings do not apply to ponder: {', '.join(bot_only)}"
        )


def flatten_document(
    document: Mapping[str, Any], fields: Collection[str]
) -> tuple[dict[str, Any], Notes]:
    """One flat mapping of config keys from either layout, and notes on what was not used."""
    values: dict[str, Any] = {}
    notes: Notes = []
    for path in SECTIONS:
        _read_section(path, _table(document, path), fields, values, notes)
    _top_level(document, fields, values, notes)
    if values.pop("_auto_retry_off", False):
        values["max_retries"] = 0
    return values, notes


def closest_key(key: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the known key closest to a misspelt one, else ``""``."""
    found = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    return f" (did you mean {found[0]!r}?)" if found else ""
