"""Making tools: ``@tool`` on plain functions, and `make_tool` for a raw schema plus handler.

A decorated function may be sync or async, may take a `ToolContext` as its first
parameter, and may take one pydantic model instead of separate parameters. Its return value
becomes a `ToolResult`: a result as is, text as the output, ``None`` as ``(no output)``,
anything else as JSON text with the value kept in ``data``.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypedDict, Unpack, overload

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ponder.exceptions import UserError
from ponder.jsontext import json_encoder
from ponder.media import File, Image
from ponder.shared_fields import built
from ponder.tools.arguments import ArgumentError, issues_from_validation_error
from ponder.tools.coerce import coerce_boolean, coerce_integer
from ponder.tools.conform import SchemaConformer
from ponder.tools.schema import FunctionShape, describe_function
from ponder.tools.threads import run_in_daemon_thread, start_held
from ponder.tools.tool import Tool, ToolContext, ToolFunction, ToolResult, ToolValidator

__all__ = ["ToolOptions", "make_tool", "to_tool_result", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_JSON = json_encoder()


class ToolOptions(TypedDict, total=False):
    """Keyword options shared by ``@tool`` and `make_tool` (see `Tool` for each field)."""

    timeout: float | None
    max_concurrency: int | None
    requires_approval: bool
    idempotent: bool
    state_type: type[BaseModel] | None
    builtin: bool
    strict: bool
    metadata: dict[str, Any]
    run_in_thread: bool
    """Run a sync function in a worker thread (default) so it cannot block the event loop."""


def to_tool_result(value: Any) -> ToolResult:
    """Convert whatever a tool function returned into a `ToolResult`."""
    kind = type(value)
    if kind is str:
        return _ok(value, None)
    if kind is int:
        return _ok(int.__repr__(value), value)  # its JSON text
    if kind is bool:
        return _ok("true" if value else "false", value)
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.ok(value)
    if value is None:
        return _ok("(no output)", None)
    if isinstance(value, Image | File):
        return ToolResult(output=f"({value.label()} attached)", attachments=(value,))
    data = to_jsonable_python(value, fallback=repr)
    return _ok(_JSON(data), data)


_OK_FIELDS = frozenset(("success", "output", "data"))


def _ok(output: str, data: Any) -> ToolResult:
    """``ToolResult.ok(output, data=data)`` for values already of their fields' types."""
    values = {
        "success": True,
        "output": output,
        "data": data,
        "error": None,
        "attachments": (),
        "display": None,
    }
    return built(ToolResult, values, set(_OK_FIELDS))  # its own set: a result may be assigned to


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **options: Unpack[ToolOptions],
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **options: Unpack[ToolOptions],
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a `Tool`; usable bare (``@tool``) or with options."""

    def build(function: Callable[..., Any]) -> Tool:
        tool_name = name or function.__name__
        _check_name(tool_name)
        shape = describe_function(function, name=tool_name)
        chosen = description if description is not None else shape.description
        if not chosen.strip():
            _warn_undescribed(tool_name)
        return _build_tool(
            tool_name,
            chosen,
            shape.parameters,
            _function_caller(function, shape, options.get("run_in_thread", True)),
            _signature_validator(shape),
            options,
        )

    return build if fn is None else build(fn)


def _warn_undescribed(name: str) -> None:
    warnings.warn(
        f"tool {name!r} has no docstring or description: the model is told nothing about "
        "what it does (add a docstring, or pass description=...)",
        UserWarning,
        stacklevel=_outside_ponder(),
    )


def _outside_ponder() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside ``ponder.tools``."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        "ponder.tools"
    ):
        frame, level = frame.f_back, level + 1
    return level


def make_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    handler: Callable[..., Any],
    *,
    validator: ToolValidator | None = None,
    **options: Unpack[ToolOptions],
) -> Tool:
    """A tool from a hand-written JSON Schema and a handler.

    The handler is called as ``handler(ctx, args)`` when its first parameter is a
    `ToolContext` (or is named ``ctx``/``context``) and it takes two, else ``handler(**args)``.
    Arguments are checked and coerced against the schema unless ``validator`` is given.
    """
    _check_name(name)
    if not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object":
        raise UserError(f"tool {name!r}: parameters must be a JSON Schema of type 'object'")
    schema = dict(parameters)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    check = validator or SchemaConformer(schema, fill_defaults=True).conform
    caller = _handler_caller(handler, options.get("run_in_thread", True))
    return _build_tool(name, description, schema, caller, check, options)


def _build_tool(
    name: str,
    description: str,
    parameters: dict[str, Any],
    function: ToolFunction,
    validator: ToolValidator,
    options: ToolOptions,
) -> Tool:
    timeout = options.get("timeout")
    if timeout is not None and not timeout > 0:
        raise UserError(f"tool {name!r}: timeout must be a positive number of seconds")
    limit = options.get("max_concurrency")
    if limit is not None and limit < 1:
        raise UserError(f"tool {name!r}: max_concurrency must be at least 1")
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        function=function,
        validator=validator,
        timeout=timeout,
        max_concurrency=limit,
        requires_approval=options.get("requires_approval", False),
        idempotent=options.get("idempotent", False),
        state_type=options.get("state_type"),
        builtin=options.get("builtin", False),
        strict=options.get("strict", False),
        metadata=dict(options.get("metadata", {})),
    )


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise UserError(
            f"invalid tool name {name!r}: use 1-64 letters, digits, '_' or '-' "
            "(what model providers accept)"
        )


_EXACT_TYPES: tuple[type, ...] = (int, str, bool)


def _exact_fields(shape: FunctionShape) -> dict[str, type] | None:
    """Each parameter's type, when every one is a bare ``int``, ``str`` or ``bool``.

    Arguments that give every such parameter a value of exactly its type pass conforming
    and validation unchanged (no constraint or default applies), so they skip both: most
    tool calls from a model are of this kind, or become so by conforming's own coercion
    of a value (``"2"`` for an ``int``), which `_exact_arguments` applies alone.
    """
    if shape.model_parameter is not None:
        return None
    fields = shape.arguments_model.model_fields
    exact: dict[str, type] = {}
    for name, field in fields.items():
        annotation: Any = field.annotation
        kind = next((t for t in _EXACT_TYPES if annotation is t), None)
        if kind is None or field.metadata:
            return None
        exact[name] = kind
    return exact


_COERCIONS: dict[type, Callable[[Any], Any]] = {int: coerce_integer, bool: coerce_boolean}
"""What conforming does to a value for a bare ``int`` or ``bool`` not already of that type."""


def _exact_arguments(args: dict[str, Any], exact: dict[str, type]) -> dict[str, Any] | None:
    """``args`` with each value of exactly its parameter's type, converted as conforming would.

    None if a value is not and cannot be: the full path says why.
    """
    converted = args
    for name, kind in exact.items():
        value = args[name]
        if type(value) is kind:
            continue
        coerce = _COERCIONS.get(kind)
        if coerce is None:
            return None
        try:
            value = coerce(value)
        except ValueError:
            return None
        if type(value) is not kind:
            return None
        if converted is args:
            converted = dict(args)
        converted[name] = value
    return converted


def _signature_validator(shape: FunctionShape) -> ToolValidator:
    conformer = SchemaConformer(shape.parameters)
    model = shape.arguments_model
    names = tuple(model.model_fields)
    exact = _exact_fields(shape)

    def validate(args: dict[str, Any]) -> dict[str, Any]:
        if exact is not None and args.keys() == exact.keys():
            converted = _exact_arguments(args, exact)
            if converted is not None:
                return converted  # as it is, at best (the executor passes a copy of its own)
        conformed = conformer.conform(args)
        try:
            instance = model.model_validate(conformed)
        except ValidationError as exc:
            raise ArgumentError(issues_from_validation_error(exc)) from None
        if shape.model_parameter is not None:
            return {shape.model_parameter: instance}
        return {field: getattr(instance, field) for field in names}

    return validate


def _function_caller(
    fn: Callable[..., Any], shape: FunctionShape, run_in_thread: bool
) -> ToolFunction:
    if shape.takes_context:
        return _caller(lambda ctx, args: fn(ctx, **args), fn, run_in_thread)
    return _caller(lambda ctx, args: fn(**args), fn, run_in_thread)


def _handler_caller(handler: Callable[..., Any], run_in_thread: bool) -> ToolFunction:
    """`_function_caller` for a handler taking ``(ctx, args)`` or the arguments by name."""
    if _takes_context(handler):
        return _caller(handler, handler, run_in_thread)
    return _caller(lambda ctx, args: handler(**args), handler, run_in_thread)


_PLAIN_VALUES = frozenset({str, int, float, bool, type(None), dict, list, tuple, ToolResult})
"""Return values that are surely not awaitable (``inspect.isawaitable`` asks an ABC)."""


def _caller(
    target: Callable[[ToolContext, dict[str, Any]], Any],
    fn: Callable[..., Any],
    run_in_thread: bool,
) -> ToolFunction:
    """One coroutine a call, awaiting the tool itself (a waiting call keeps fewer frames).

    ``target(ctx, args)`` calls ``fn``: inline if ``fn`` is async or ``run_in_thread`` is
    off, else in a worker thread.
    """
    if inspect.iscoroutinefunction(fn) or not run_in_thread:

        async def call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
            start_held()  # threaded siblings held for a batch do not wait for this one
            value = target(ctx, args)
            if type(value) not in _PLAIN_VALUES and inspect.isawaitable(value):
                value = await value
            return to_tool_result(value)

        return call

    async def call_in_thread(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        value = await run_in_daemon_thread(functools.partial(target, ctx, args), ctx)
        if type(value) not in _PLAIN_VALUES and inspect.isawaitable(value):
            value = await value
        return to_tool_result(value)

    return call_in_thread


def _takes_context(handler: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    if len(params) != 2 or params[0].kind is params[0].VAR_KEYWORD:
        return False
    first = params[0]
    return first.annotation in (ToolContext, "ToolContext") or first.name in ("ctx", "context")
