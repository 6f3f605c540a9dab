"""Every `AgentConfig` key described for a settings page, and edits validated like the file.

All of it is read from the pydantic fields: the description is the field's docstring, the
default, the ``Literal`` values and the numeric bounds come from its annotation. The
sections are the spec's tables (``[core.function_config]``, ``[core.builtin]``,
``[core.builtin.react_config]``, ``[llm]``, ``[llm.tools]``) plus ``[agent]`` for ponder's
own keys, in the order the fields are declared. `apply_changes` raises the same
``ConfigError`` messages as `load_config`.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from ponder.config.agent import AgentConfig
from ponder.config.masking import mask
from ponder.exceptions import ConfigError

__all__ = [
    "SECRET_KEYS",
    "SECTIONS",
    "ConfigField",
    "FieldKind",
    "apply_changes",
    "config_fields",
    "describe_config",
    "section_of",
    "to_plain",
]

SECTIONS: tuple[str, ...] = (
    "core.function_config",
    "core.builtin",
    "core.builtin.react_config",
    "llm",
    "llm.tools",
    "agent",
)
"""The tables a settings page shows, in the spec's order."""
_FIRST_KEY = {
    "agent_strategy": "llm",
    "enable_report": "llm.tools",
    "agent_tool_call_limit": "core.function_config",
    "tool_calling_mode": "core.builtin",
    "structured_reasoning": "core.builtin.react_config",
    "enable_thinking_tool": "agent",
}
"""The first key of each section; `AgentConfig` declares its fields section by section."""
SECRET_KEYS = frozenset({"api_key"})
"""Keys whose values are never shown (only whether they are set)."""

FieldKind = Literal["bool", "int", "float", "string", "choice", "list", "table"]


@dataclass(frozen=True)
class ConfigField:
    """One key: where it lives, what it means, what it may be."""

    key: str
    section: str
    kind: FieldKind
    description: str
    default: Any
    nullable: bool = False
    choices: tuple[str, ...] = ()
    bounds: dict[str, float] = field(default_factory=dict)
    """``ge``, ``gt``, ``le``, ``lt`` as the field declares them."""
    secret: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The description as JSON-able data."""
        return {
            "key": self.key,
            "section": self.section,
            "kind": self.kind,
            "description": self.description,
            "default": None if self.secret else to_plain(self.default),
            "nullable": self.nullable,
            "choices": list(self.choices),
            "bounds": dict(self.bounds),
            "secret": self.secret,
        }


def to_plain(value: Any) -> Any:
    """``value`` as JSON/TOML data: tuples become lists (recursively)."""
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


def _kind(annotation: Any) -> tuple[FieldKind, bool, tuple[str, ...]]:
    """The widget kind of an annotation, whether None is allowed, and its literal values."""
    args = get_args(annotation)
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        kind, _, choices = _kind(rest[0]) if len(rest) == 1 else ("list", False, ())
        return kind, type(None) in args, choices
    if origin is Literal:
        return "choice", False, tuple(str(a) for a in args)
    if origin is tuple:
        return "list", False, ()
    if origin is dict:
        return "table", False, ()
    simple: dict[Any, FieldKind] = {bool: "bool", int: "int", float: "float"}
    return simple.get(annotation, "string"), False, ()


def _bounds(info: FieldInfo) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in info.metadata:  # annotated_types' Ge, Gt, Le, Lt
        for name in ("ge", "gt", "le", "lt"):
            bound = getattr(item, name, None)
            if isinstance(bound, int | float):
                found[name] = float(bound)
    return found


def config_fields() -> list[ConfigField]:
    """Every key of `AgentConfig`, in declaration order."""
    fields: list[ConfigField] = []
    section = SECTIONS[3]
    for key, info in AgentConfig.model_fields.items():
        section = _FIRST_KEY.get(key, section)
        kind, nullable, choices = _kind(info.annotation)
        default = info.get_default(call_default_factory=True)
        description = " ".join((info.description or "").split())
        fields.append(
            ConfigField(
                key,
                section,
                kind,
                description,
                default,
                nullable,
                choices,
                _bounds(info),
                secret=key in SECRET_KEYS,
            )
        )
    return fields


def section_of(key: str) -> str:
    """The section a key belongs to; ``ConfigError`` for an unknown key."""
    for item in config_fields():
        if item.key == key:
            return item.section
    raise unknown_key(key)


def unknown_key(key: str) -> ConfigError:
    """The error for a key `AgentConfig` does not have, with the closest one."""
    close = difflib.get_close_matches(key, list(AgentConfig.model_fields), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(key, f"unknown configuration key{hint}")


def describe_config(config: AgentConfig) -> list[dict[str, Any]]:
    """The sections with each key's description and its value in ``config``.

    A secret key's value is replaced by whether it is set; secrets inside other values
    (URL passwords, an MCP server's env and headers, tokens) by `ponder.config.masking.MASK`.
    """
    by_section: dict[str, list[dict[str, Any]]] = {name: [] for name in SECTIONS}
    for item in config_fields():
        value = getattr(config, item.key)
        entry = item.as_dict()
        entry["value"] = (value is not None) if item.secret else mask(to_plain(value))
        entry["is_default"] = value == item.default
        by_section[item.section].append(entry)
    return [{"name": name, "keys": keys} for name, keys in by_section.items()]


def apply_changes(config: AgentConfig, changes: Mapping[str, Any]) -> AgentConfig:
    """``config`` with ``changes`` (key → value; None = the default) applied and validated.

    Unknown keys are refused here (a file only warns about them); invalid values raise
    the loader's ``ConfigError``.
    """
    for key in changes:
        if key not in AgentConfig.model_fields:
            raise unknown_key(key)
    values = config.model_dump()
    for key, value in changes.items():
        if value is None:
            values.pop(key)
        else:
            values[key] = value
    return AgentConfig.from_mapping(values)
