"""Writing configuration changes back into a TOML file, keeping its comments and layout.

`write_changes` edits the document with tomlkit, so everything it does not change stays
byte for byte. Each key is written where `load_config` reads it from: the table that wins
for it today (under its bot name too, e.g. ``max_context``), else its spec section in a
file of the bot's layout, else the top level of a flat ``ponder.toml`` (or its
``[agent]``). A value of None removes the key (the default applies again).
"""

from __future__ import annotations

import os
import stat
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from ponder.config.bot import RENAMED, SECTIONS
from ponder.config.fields import section_of, to_plain
from ponder.exceptions import ConfigError

__all__ = ["write_changes"]

_BOT_ROOTS = ("core", "llm", "default_preset", "cookies")
_PRESET_KEYS = ("model", "base_url", "api_key")
Location = tuple[tuple[str, ...], str]
"""A table path and the name the key has there."""


def _table(document: Container, path: tuple[str, ...]) -> Any:
    table: Any = document
    for part in path:
        table = table.get(part) if isinstance(table, Container | Table) else None
        if table is None:
            return None
    return table if isinstance(table, Container | Table) else None


def _names(key: str, path: tuple[str, ...]) -> list[str]:
    names = [key, *(old for old, new in RENAMED.items() if new == key)]
    if path == ("default_preset",) and key not in _PRESET_KEYS:
        return []  # the loader takes only these from the preset's own table
    return names


def _current_location(document: Container, key: str) -> Location | None:
    """Where the loader reads ``key`` from today: the last location that has it."""
    found: Location | None = None
    for path in (*SECTIONS, ()):
        table = _table(document, path)
        for name in _names(key, path) if table is not None else ():
            if name in table:
                found = (path, name)
    return found


def _new_location(document: Container, key: str) -> Location:
    if any(root in document for root in _BOT_ROOTS):
        return tuple(section_of(key).split(".")), key
    return (("agent",) if _table(document, ("agent",)) is not None else ()), key


def _ensure_table(document: Container, path: tuple[str, ...]) -> Any:
    table: Any = document
    for depth, part in enumerate(path):
        if part not in table:
            table[part] = tomlkit.table(is_super_table=depth < len(path) - 1)
        table = table[part]
    return table


def _edited_text(text: str, changes: Mapping[str, Any], origin: str) -> str:
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(origin, f"not valid TOML: {exc}") from None
    for key, value in changes.items():
        path, name = _current_location(document, key) or _new_location(document, key)
        if value is None:
            table = _table(document, path)
            if table is not None and name in table:
                del table[name]
            continue
        _ensure_table(document, path)[name] = to_plain(value)
    return tomlkit.dumps(document)


def _check_writable(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the config file: {exc.strerror}") from None
    # root may write anywhere: a file without any write bit counts as read-only for it too
    if not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(str(path), "the config file is read-only; nothing was written")


def write_changes(path: Path, changes: Mapping[str, Any]) -> None:
    """Write already validated ``changes`` into the TOML file at ``path``.

    The file is replaced in one step (a temporary file renamed over it, its mode kept):
    a refusal or a failure leaves it as it was. ``ConfigError`` says why.
    """
    path = path.resolve()  # through a symlink, the file it points to is edited
    _check_writable(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the config file: {exc.strerror}") from None
    edited = _edited_text(text, changes, str(path))
    tomllib.loads(edited)  # what tomlkit wrote must load again
    if edited == text:
        return
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        message = f"cannot write next to the config file: {exc.strerror}; nothing was written"
        raise ConfigError(str(path), message) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(edited)
        os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        message = f"cannot write the config file: {exc.strerror}; nothing was written"
        raise ConfigError(str(path), message) from None
