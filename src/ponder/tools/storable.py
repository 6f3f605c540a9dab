"""Making a tool's result storable: text any store or wire can encode, data that is JSON.

A tool may return text with lone surrogates (which UTF-8 cannot encode) or data that is
not JSON (sets, dates, models). Surrogates are replaced by U+FFFD; data is converted, or
refused with an error result that says what to return instead. The usual result (ASCII
text, no error, numeric or no data) is returned as it is, without a look at its parts.
"""

from __future__ import annotations

import json

from pydantic_core import PydanticSerializationError, to_jsonable_python

from ponder.scrub import is_clean, scrub_text, scrub_value
from ponder.tools.redact import describe
from ponder.tools.tool import ToolResult

__all__ = ["storable"]

_PLAIN_DATA = frozenset({type(None), int, float, bool})
_JSON_SCALARS = frozenset({str, int, float, bool})
"""Data of these exact types is stored as it is (no conversion, no copy)."""


def storable(name: str, result: ToolResult) -> tuple[ToolResult, bool]:
    """``result`` fit to store, and whether its data was refused (tool ``name``'s result).

    A refused result is an error result in its place.
    """
    if _plain(result):
        return result, False
    result = _scrubbed(result)
    if result.data is None or (type(result.data) in _JSON_SCALARS and is_clean(result.data)):
        return result, False
    try:
        data = scrub_value(to_jsonable_python(result.data))
        json.dumps(data)
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        refused = ToolResult.fail(
            f"tool {name!r} returned data that cannot be stored as JSON ({describe(exc)}); "
            "return plain values: strings, numbers, lists, dicts"
        )
        return refused, True
    return result.model_copy(update={"data": data}), False


def _plain(result: ToolResult) -> bool:
    """True for the usual result: ASCII text, no error, data None or a number."""
    output = result.output
    return (
        type(result.data) in _PLAIN_DATA
        and result.error is None
        and type(output) is str
        and output.isascii()
    )


def _scrubbed(result: ToolResult) -> ToolResult:
    """``result`` without lone surrogates, which no store or wire can encode."""
    if is_clean(result.output) and is_clean(result.error) and is_clean(result.data):
        return result  # without copying ``data``
    output, error = scrub_text(result.output), scrub_text(result.error or "")
    data = scrub_value(result.data)
    if output is result.output and error == (result.error or "") and data == result.data:
        return result
    update = {"output": output, "error": error if result.error else None, "data": data}
    return result.model_copy(update=update)
