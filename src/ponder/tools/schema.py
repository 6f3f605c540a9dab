"""JSON Schemas for tools, from a function's type hints and its Google-style docstring.

`describe_function` reads a signature once, at decoration time: which parameter takes the
`ToolContext`, whether the tool takes one pydantic model, the pydantic model that validates
the arguments and the JSON Schema the model is shown (parameter docs as descriptions). The
shape of a function defined at the top of a module or class is kept while its signature and
docstring stay the same, so handing it to many agents builds its schema once.
"""

from __future__ import annotations

import inspect
import operator
import re
import types
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from ponder.exceptions import UserError
from ponder.tools.tool import ToolContext

__all__ = ["FunctionShape", "describe_function", "is_kept", "parse_docstring", "strip_titles"]

_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]*):\s*$")
_ARG_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args"}
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class FunctionShape:
    """What a tool function looks like to the tool layer."""

    description: str
    parameters: dict[str, Any]
    arguments_model: type[BaseModel]
    takes_context: bool
    model_parameter: str | None
    """The name of the single pydantic-model parameter, when the tool takes one."""


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its ``Args:`` entries."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header and not line.startswith(" "):
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in _ARG_SECTIONS:
            current = _read_arg_line(line, params, current)
    return "\n".join(summary).strip(), params


def _read_arg_line(line: str, params: dict[str, str], current: str | None) -> str | None:
    stripped = line.strip()
    entry = _ARG_LINE.match(stripped)
    indent = len(line) - len(line.lstrip())
    if entry and indent <= 4:
        name = entry.group(1).lstrip("*")
        params[name] = entry.group(2).strip()
        return name
    if current is not None and stripped:
        params[current] = f"{params[current]} {stripped}".strip()
    return current


def strip_titles(schema: Any) -> Any:
    """A copy of a JSON Schema without pydantic's generated ``title`` keys."""
    if isinstance(schema, list):
        return [strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            result[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
            result[key] = strip_titles(value)
        else:
            result[key] = value
    return result


_SHAPES: weakref.WeakKeyDictionary[Callable[..., Any], tuple[tuple[Any, ...], FunctionShape]]
_SHAPES = weakref.WeakKeyDictionary()


def describe_function(fn: Callable[..., Any], *, name: str) -> FunctionShape:
    """Read ``fn``'s signature, hints and docstring; raises `UserError` on unusable ones."""
    marks = _identity(fn, name)
    if marks is None:
        return _describe(fn, name)
    kept = _SHAPES.get(fn)
    if kept is not None and _same(kept[0], marks):
        return kept[1]
    shape = _describe(fn, name)
    _SHAPES[fn] = (marks, shape)
    return shape


def is_kept(fn: Callable[..., Any]) -> bool:
    """True for a function whose shape `describe_function` keeps: a top-level one.

    Nested functions are new objects each time their definition runs: keeping their shapes
    would only hold them until they die.
    """
    return (
        type(fn) is types.FunctionType
        and "<locals>" not in fn.__qualname__
        and "__wrapped__" not in fn.__dict__
        and "__signature__" not in fn.__dict__
    )


def _identity(fn: Callable[..., Any], name: str) -> tuple[Any, ...] | None:
    """What a kept function's shape is read from (compared by identity); None: not kept."""
    if not is_kept(fn):
        return None
    hints = fn.__annotations__
    return (
        name,
        fn.__code__,
        fn.__defaults__,
        fn.__kwdefaults__,
        fn.__doc__,
        *hints,
        *hints.values(),
    )


def _same(kept: tuple[Any, ...], marks: tuple[Any, ...]) -> bool:
    return len(kept) == len(marks) and all(map(operator.is_, kept, marks))


def _describe(fn: Callable[..., Any], name: str) -> FunctionShape:
    signature = inspect.signature(fn)
    hints = _type_hints(fn, name)
    params = list(signature.parameters.values())
    takes_context = bool(params) and hints.get(params[0].name) is ToolContext
    if takes_context:
        params = params[1:]
    for param in params:
        _check_parameter(param, hints, name)
    description, docs = parse_docstring(fn.__doc__)
    model_parameter = _single_model_parameter(params, hints)
    if model_parameter is not None:
        model: type[BaseModel] = hints[model_parameter]
        description = description or (model.__doc__ or "").strip()
    else:
        model = _arguments_model(name, params, hints, docs)
    try:
        schema = strip_titles(model.model_json_schema())
    except Exception as exc:
        if model_parameter is None:
            _name_unschemable(name, params, hints)
        raise UserError(f"tool {name!r}: its parameters have no JSON Schema ({exc})") from exc
    schema.setdefault("properties", {})
    return FunctionShape(description, schema, model, takes_context, model_parameter)


def _type_hints(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    try:
        return get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise UserError(f"tool {name!r}: cannot resolve its type hints ({exc})") from exc


def _check_parameter(param: inspect.Parameter, hints: Mapping[str, Any], name: str) -> None:
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
        raise UserError(
            f"tool {name!r}: parameter {param.name!r} must be a named parameter "
            "(no *args, **kwargs or positional-only parameters)"
        )
    if hints.get(param.name) is ToolContext:
        raise UserError(f"tool {name!r}: a ToolContext parameter must come first")


def _single_model_parameter(
    params: list[inspect.Parameter], hints: Mapping[str, Any]
) -> str | None:
    if len(params) != 1:
        return None
    hint = hints.get(params[0].name)
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return params[0].name
    return None


def _arguments_model(
    name: str,
    params: list[inspect.Parameter],
    hints: Mapping[str, Any],
    docs: Mapping[str, str],
) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for param in params:
        hint = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hint, Field(default, description=docs.get(param.name)))
    try:
        return create_model(
            f"{name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
    except Exception as exc:
        _name_unschemable(name, params, hints)
        raise UserError(f"tool {name!r}: its parameters have no JSON Schema ({exc})") from exc


def _name_unschemable(name: str, params: list[inspect.Parameter], hints: Mapping[str, Any]) -> None:
    """Raise a `UserError` naming the first parameter whose type has no JSON Schema."""
    for param in params:
        hint = hints.get(param.name, Any)
        try:
            TypeAdapter(hint).json_schema()
        except Exception:
            shown = getattr(hint, "__name__", None) or repr(hint)
            raise UserError(
                f"tool {name!r}: parameter {param.name!r} has type {shown}, which has no JSON "
                "Schema (use str, int, float, bool, lists, dicts, enums, dataclasses or "
                "pydantic models)"
            ) from None
