"""Secrets inside configuration values: hidden when shown, kept when a shown value comes back.

`mask` replaces every secret inside a key's value with `MASK`: the password of a URL
(``https://user:pw@host``) and secret-named query parameters (``?api_key=…``), the values
of an MCP server table's ``env`` and ``headers``, and any table entry whose name says it
is a secret (``token``, ``password``, ``client_secret``, ``api_key`` …). `unmask` puts the
current secrets back where an edited value still carries `MASK`, so a settings page that
sends back what it was shown changes nothing it did not mean to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "is_secret_name", "mask", "mask_url", "unmask"]

MASK = "********"
"""What a hidden secret shows as."""
_SECRET_NAME = re.compile(
    r"(^|[_\-.])(token|secret|password|passwd|pwd|api[_\-]?key|apikey|key|authorization|"
    r"credentials?|cookie|signature|private[_\-]?key|client[_\-]?secret)($|[_\-.])",
    re.IGNORECASE,
)
_NOT_SECRET_SUFFIXES = ("_endpoint", "_method", "_store", "_file", "_url", "_algorithm", "_id")
_ALL_VALUES_SECRET = frozenset({"env", "headers", "environment"})
"""Table entries whose every value is hidden (an MCP server's environment and headers)."""
_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for a name that says its value is a secret (``token``, ``client_secret`` …).

    Names of what merely concerns a secret (``token_endpoint``, ``private_key_file``) are not.
    """
    if name.lower().endswith(_NOT_SECRET_SUFFIXES):
        return False
    return bool(_SECRET_NAME.search(name))


def mask_url(text: str) -> str:
    """``text`` with a URL's password and secret-named query values replaced by `MASK`."""
    if not _URL.match(text):
        return text
    try:
        parts = urlsplit(text)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            name = user.partition(":")[0]
            netloc = f"{name}:{MASK}@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(is_secret_name(k) for k, _ in pairs):
                hidden = [(k, MASK if is_secret_name(k) else v) for k, v in pairs]
                query = urlencode(hidden, safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # not a URL after all (a bad port, a broken IPv6 address)
        return MASK


def mask(value: Any, *, secret: bool = False) -> Any:
    """``value`` (plain JSON data) with every secret inside it replaced by `MASK`."""
    if secret:
        if isinstance(value, Mapping):
            return {str(k): mask(v, secret=True) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mask(v, secret=True) for v in value]
        return MASK if value not in (None, "") else value
    if isinstance(value, str):
        return mask_url(value)
    if isinstance(value, list | tuple):
        return [mask(v) for v in value]
    if isinstance(value, Mapping):
        return {
            str(k): mask(v, secret=str(k).lower() in _ALL_VALUES_SECRET or is_secret_name(str(k)))
            for k, v in value.items()
        }
    return value


def unmask(new: Any, current: Any) -> Any:
    """``new`` with each `MASK` (whole, or in a URL) taken from ``current`` at the same place.

    A table in a list is matched by its ``name`` when it has one, else by position; a
    masked URL whose current value masks to the same text is the current value.
    """
    if isinstance(new, str):
        if isinstance(current, str) and MASK in new and mask(current) == new:
            return current
        if new == MASK and current is not None and not isinstance(current, Mapping | list):
            return current
        return new
    if isinstance(new, Mapping):
        old = current if isinstance(current, Mapping) else {}
        return {k: unmask(v, old.get(k)) for k, v in new.items()}
    if isinstance(new, list):
        old_list = list(current) if isinstance(current, list | tuple) else []
        named = {
            str(item["name"]): item
            for item in old_list
            if isinstance(item, Mapping) and isinstance(item.get("name"), str)
        }
        restored: list[Any] = []
        for index, item in enumerate(new):
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                match = named.get(str(item["name"]))
            else:
                match = old_list[index] if index < len(old_list) else None
            restored.append(unmask(item, match))
        return restored
    return new
