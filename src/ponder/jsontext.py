"""JSON text of plain values, without `json.JSONEncoder`'s setup on every call.

``JSONEncoder.encode`` builds its C encoder anew for each value, which costs more than
encoding the small values ponder encodes on every step (a call's arguments, a tool's
result, a checkpoint's rows). `json_encoder` builds the C encoder once. It keeps no
record of the containers it is in (that record is what cannot be shared), so a value
that contains itself, or is nested too deeply for it, is encoded once more by
``JSONEncoder``, which raises what ``json.dumps`` raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _stdlib
from typing import Any

__all__ = ["json_encoder"]


def json_encoder(
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, ...)`` with these options, as one function."""
    slow = json.JSONEncoder(
        ensure_ascii=False, sort_keys=sort_keys, separators=separators, default=default
    )
    make = getattr(_stdlib, "c_make_encoder", None)  # not in the typeshed stubs
    if make is None:  # an interpreter without the C accelerator
        return slow.encode
    item_separator, key_separator = separators
    fast = make(
        None,
        slow.default,
        _stdlib.encode_basestring,
        None,
        key_separator,
        item_separator,
        sort_keys,
        False,
        True,
    )

    def encode(value: Any) -> str:
        try:
            return "".join(fast(value, 0))
        except RecursionError:  # a cycle, or deep nesting: the checked path says which
            return slow.encode(value)

    return encode
