"""A chat request's ``response_format`` as the type of the run's answer.

- ``{"type": "text"}`` (or none): the agent answers in text.
- ``{"type": "json_object"}``: the answer must be a JSON object.
- ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``: the answer
  must match the schema (an `OutputSpec` of it); ``content`` is its validated JSON.

Any other shape is a 400 (`RequestError`) whose ``param`` names the field at fault.
"""

from __future__ import annotations

import re
from typing import Any

from ponder.agent.output import OutputSpec
from ponder.exceptions import UserError
from ponder.server.openai_request import RequestError
from ponder.server.schemas import ChatRequest

__all__ = ["output_spec_of"]

_PARAM = "response_format"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ANY_OBJECT: dict[str, Any] = {"type": "object"}
_MAX_DEPTH = 128
"""The deepest schema (objects and arrays in one another) a request may give."""


def output_spec_of(body: ChatRequest) -> OutputSpec | None:
    """The answer's type the request asks for; None for a text answer."""
    fmt = body.response_format
    if fmt is None or fmt == "text":
        return None
    if not isinstance(fmt, dict):
        raise RequestError(
            f"response_format must be an object such as {{'type': 'json_schema', ...}}, "
            f"not {type(fmt).__name__}",
            _PARAM,
        )
    match fmt.get("type"):
        case "text":
            return None
        case "json_object":
            return OutputSpec(json_schema=dict(_ANY_OBJECT), name="json_object")
        case "json_schema":
            return _schema_spec(fmt.get("json_schema"))
        case other:
            raise RequestError(
                f"response_format type {other!r} is not 'text', 'json_object' or 'json_schema'",
                f"{_PARAM}.type",
            )


def _schema_spec(given: Any) -> OutputSpec:
    param = f"{_PARAM}.json_schema"
    if not isinstance(given, dict):
        raise RequestError(
            "response_format json_schema needs a 'json_schema' object with a 'name' and a 'schema'",
            param,
        )
    name, schema, strict = given.get("name"), given.get("schema", _ANY_OBJECT), given.get("strict")
    if not isinstance(name, str) or not _NAME.match(name):
        raise RequestError(
            f"response_format json_schema.name must be 1 to 64 letters, digits, '_' or '-', "
            f"got {name!r}",
            f"{param}.name",
        )
    if strict is not None and not isinstance(strict, bool):
        raise RequestError(
            f"response_format json_schema.strict must be a boolean, got {strict!r}",
            f"{param}.strict",
        )
    if _is_deeper(schema, _MAX_DEPTH):
        raise RequestError(
            f"response_format: the schema is nested more than {_MAX_DEPTH} levels deep",
            f"{param}.schema",
        )
    try:
        return OutputSpec(json_schema=schema, name=name, strict=strict, argument=param + ".schema")
    except UserError as error:
        raise RequestError(str(error), f"{param}.schema") from None


def _is_deeper(value: Any, limit: int) -> bool:
    """True when ``value`` nests objects and arrays more than ``limit`` deep."""
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [
            inner
            for item in level
            for inner in (item.values() if isinstance(item, dict) else item)
            if isinstance(inner, dict | list)
        ]
        if not level:
            return False
    return bool(level)
