"""Conform untrusted arguments to a JSON Schema, coercing only where the schema asks.

`SchemaConformer` walks a value and its schema together: ``"2"`` becomes ``2`` where an
integer is expected and ``"true"`` becomes ``true`` where a boolean is; ambiguous input
(``true`` for an integer, hex, arrays for scalars) is refused. Every problem becomes an
`ArgumentIssue` that names the field, what was expected and what was received.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ponder.tools.arguments import ArgumentError, ArgumentIssue, format_path
from ponder.tools.coerce import coerce_boolean, coerce_integer, coerce_number, describe_value

__all__ = ["SchemaConformer", "describe_expected"]

Path = tuple[str | int, ...]
Issues = list[ArgumentIssue]

_ARTICLES = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "string": "a string",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_EXACT: dict[str, type] = {"integer": int, "boolean": bool}
_BOUND_KEYS = frozenset(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))
_SCALARS: dict[str, Callable[[Any], Any]] = {
    "integer": coerce_integer,
    "number": coerce_number,
    "boolean": coerce_boolean,
}


def describe_expected(schema: Mapping[str, Any]) -> str:
    """A short phrase for what a schema accepts: ``an integer``, ``one of "a", "b"``."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if isinstance(kind, str):
        return _ARTICLES.get(kind, kind)
    if isinstance(kind, list):
        return " or ".join(_ARTICLES.get(str(k), str(k)) for k in kind)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return " or ".join(describe_expected(b) for b in branches)
    if "$ref" in schema:
        return "an object"
    return "a value"


class SchemaConformer:
    """Checks and coerces values against one JSON Schema (``$defs`` references resolved)."""

    __slots__ = ("_defs", "_fill_defaults", "schema")

    def __init__(self, schema: Mapping[str, Any], *, fill_defaults: bool = False) -> None:
        self.schema = schema
        self._defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        self._fill_defaults = fill_defaults

    def conform(self, value: Any) -> Any:
        """The coerced value, or `ArgumentError` listing every issue found."""
        issues: Issues = []
        result = self._value(value, self.schema, (), issues)
        if issues:
            raise ArgumentError(issues)
        return result

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        if "$ref" not in schema and "allOf" not in schema:
            return schema
        seen = 0
        while "$ref" in schema and seen < 32:
            name = str(schema["$ref"]).rsplit("/", 1)[-1]
            target = self._defs.get(name)
            if target is None:
                return {}
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            seen += 1
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return self._resolve({**all_of[0], **rest})
        return schema

    def _value(self, value: Any, schema: Mapping[str, Any], path: Path, issues: Issues) -> Any:
        schema = self._resolve(schema)
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            return self._union(value, schema, branches, path, issues)
        kind = schema.get("type")
        if isinstance(kind, list):
            split = [{**schema, "type": k} for k in kind]
            return self._union(value, schema, split, path, issues)
        if isinstance(kind, str):
            before = len(issues)
            value = self._typed(value, kind, schema, path, issues)
            if len(issues) > before:
                return value
        self._check_choices(value, schema, path, issues)
        return value

    def _typed(
        self, value: Any, kind: str, schema: Mapping[str, Any], path: Path, issues: Issues
    ) -> Any:
        if kind in _SCALARS:
            if type(value) is not _EXACT.get(kind):
                try:
                    value = _SCALARS[kind](value)
                except ValueError as exc:
                    issues.append(ArgumentIssue(format_path(path), str(exc)))
                    return value
            if not _BOUND_KEYS.isdisjoint(schema):
                _check_bounds(value, schema, path, issues)
            return value
        if kind == "object":
            return self._object(value, schema, path, issues)
        if kind == "array":
            return self._array(value, schema, path, issues)
        if kind == "string":
            _check_string(value, schema, path, issues)
        elif kind == "null" and value is not None:
            issues.append(_mismatch(path, "null", value))
        return value

    def _union(
        self,
        value: Any,
        schema: Mapping[str, Any],
        branches: list[Any],
        path: Path,
        issues: Issues,
    ) -> Any:
        best: Issues | None = None
        for branch in branches:
            attempt: Issues = []
            result = self._value(value, branch, path, attempt)
            if not attempt:
                return result
            deeper = [i for i in attempt if i.path != format_path(path)]
            if deeper and (best is None or len(attempt) < len(best)):
                best = attempt
        if best is not None:
            issues.extend(best)
        else:
            expected = describe_expected(schema)
            issues.append(
                ArgumentIssue(
                    format_path(path), f"expected {expected}, received {describe_value(value)}"
                )
            )
        return value

    def _object(self, value: Any, schema: Mapping[str, Any], path: Path, issues: Issues) -> Any:
        if not isinstance(value, dict):
            issues.append(_mismatch(path, "object", value))
            return value
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        result: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in value:
                result[name] = self._value(value[name], sub, (*path, name), issues)
            elif name in required:
                expected = describe_expected(self._resolve(sub))
                issues.append(
                    ArgumentIssue(format_path((*path, name)), f"missing (expected {expected})")
                )
            elif self._fill_defaults and "default" in sub:
                result[name] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties", True)
        for name in value.keys() - properties.keys():
            if extra is False:
                allowed = ", ".join(properties) or "none"
                message = f"unexpected field; remove it (allowed fields: {allowed})"
                issues.append(ArgumentIssue(format_path((*path, name)), message))
            elif isinstance(extra, dict):
                result[name] = self._value(value[name], extra, (*path, name), issues)
            else:
                result[name] = value[name]
        return result

    def _array(self, value: Any, schema: Mapping[str, Any], path: Path, issues: Issues) -> Any:
        if not isinstance(value, list):
            issues.append(_mismatch(path, "array", value))
            return value
        items = schema.get("items")
        result = value
        if isinstance(items, dict):
            result = [self._value(v, items, (*path, i), issues) for i, v in enumerate(value)]
        low, high = schema.get("minItems"), schema.get("maxItems")
        if isinstance(low, int) and len(value) < low:
            issues.append(
                ArgumentIssue(
                    format_path(path), f"needs at least {low} item(s), received {len(value)}"
                )
            )
        if isinstance(high, int) and len(value) > high:
            issues.append(
                ArgumentIssue(
                    format_path(path), f"allows at most {high} item(s), received {len(value)}"
                )
            )
        return result

    def _check_choices(
        self, value: Any, schema: Mapping[str, Any], path: Path, issues: Issues
    ) -> None:
        allowed = schema.get("enum")
        if "const" in schema:
            allowed = [schema["const"]]
        if isinstance(allowed, list) and not any(_same(value, a) for a in allowed):
            expected = describe_expected(schema)
            issues.append(
                ArgumentIssue(
                    format_path(path), f"expected {expected}, received {describe_value(value)}"
                )
            )


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    if isinstance(value, int | float) and isinstance(allowed, int | float):
        return value == allowed
    return type(value) is type(allowed) and bool(value == allowed)


def _mismatch(path: Path, kind: str, value: Any) -> ArgumentIssue:
    return ArgumentIssue(
        format_path(path), f"expected {_ARTICLES[kind]}, received {describe_value(value)}"
    )


def _check_string(value: Any, schema: Mapping[str, Any], path: Path, issues: Issues) -> None:
    where = format_path(path)
    if not isinstance(value, str):
        issues.append(_mismatch(path, "string", value))
        return
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        issues.append(
            ArgumentIssue(where, f"needs at least {low} character(s), received {len(value)}")
        )
    if isinstance(high, int) and len(value) > high:
        issues.append(
            ArgumentIssue(where, f"allows at most {high} character(s), received {len(value)}")
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and re.search(pattern, value) is None:
        issues.append(ArgumentIssue(where, f"must match the pattern {pattern!r}"))


_BOUNDS: tuple[tuple[str, Callable[[float, float], bool], str], ...] = (
    ("minimum", lambda value, bound: value >= bound, "at least"),
    ("maximum", lambda value, bound: value <= bound, "at most"),
    ("exclusiveMinimum", lambda value, bound: value > bound, "greater than"),
    ("exclusiveMaximum", lambda value, bound: value < bound, "less than"),
)


def _check_bounds(value: Any, schema: Mapping[str, Any], path: Path, issues: Issues) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    for key, holds, phrase in _BOUNDS:
        bound = schema.get(key)
        if (
            isinstance(bound, int | float)
            and not isinstance(bound, bool)
            and not holds(value, bound)
        ):
            message = f"must be {phrase} {bound}, received {value}"
            issues.append(ArgumentIssue(format_path(path), message))
