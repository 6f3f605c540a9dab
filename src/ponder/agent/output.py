"""`OutputSpec`: the type a run's final answer must have, as a JSON schema and a validator.

A spec is made from a Python type (a pydantic model, a dataclass, a TypedDict, a scalar
or a container of them: anything pydantic can validate and describe) or from a JSON
Schema dict (``ponder run --output-schema``). A schema that is not an object is wrapped
in ``{"response": ...}`` for the wire (providers want an object at the top) and unwrapped
when read back. Values are kept in the run's state as JSON (``to_json``) and validated
into the type again when the result is built (``from_json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic_core import from_json

from ponder.exceptions import UserError
from ponder.models.base import ModelDelta, OutputSchema
from ponder.models.structured import is_strict_schema, tool_name

__all__ = ["OutputSpec", "OutputValidation", "PartialOutput", "restored_output"]

_WRAP_KEY = "response"


@dataclass(frozen=True, slots=True)
class OutputValidation:
    """The outcome of reading one answer: its JSON value, or what is wrong with it."""

    value: Any = None
    problem: str | None = None


class OutputSpec:
    """What the final answer must be: a type (or a JSON Schema) and its wire schema."""

    __slots__ = ("_adapter", "_checker", "json_schema", "output_type", "schema", "wrapped")

    def __init__(
        self,
        output_type: Any = None,
        *,
        json_schema: dict[str, Any] | None = None,
        name: str | None = None,
        strict: bool | None = None,
        argument: str = "output_type",
    ) -> None:
        """A spec of ``output_type`` or of ``json_schema``.

        ``name`` (else the type's or the schema's title) names the answer to the model;
        ``strict`` asks the provider for strict schema adherence (by default: when the
        schema allows it).
        """
        self.output_type = output_type
        self._adapter: TypeAdapter[Any] | None = None
        self._checker: Any = None
        if json_schema is None:
            self._adapter, schema, title, doc = _describe(output_type, argument)
        else:
            schema, title, doc = _checked_schema(json_schema, argument)
            from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

            self._checker = Draft202012Validator(schema)
        self.json_schema = schema
        """The answer's own schema (unwrapped), as kept with the run."""
        self.wrapped = schema.get("type") != "object"
        wire = _wrap(schema) if self.wrapped else schema
        self.schema = OutputSchema(
            name=tool_name(title if name is None else name),
            json_schema=wire,
            description=doc,
            strict=is_strict_schema(wire) if strict is None else strict,
        )

    @classmethod
    def from_stored(cls, schema: dict[str, Any]) -> OutputSpec:
        """A spec for a resumed run whose caller gave no type: its stored JSON schema."""
        return cls(json_schema=schema, argument="the run's stored output schema")

    def read(self, text: str) -> OutputValidation:
        """Parse and validate an answer's text; ``problem`` names what is wrong."""
        try:
            data = json.loads(_strip_fence(text.strip()))
        except json.JSONDecodeError as exc:
            return OutputValidation(problem=f"not valid JSON: {exc.msg} at position {exc.pos}")
        if self.wrapped:
            if not isinstance(data, dict) or _WRAP_KEY not in data:
                return OutputValidation(problem=f'expected an object {{"{_WRAP_KEY}": ...}}')
            data = data[_WRAP_KEY]
        problem = self._problem(data)
        return OutputValidation(problem=problem) if problem else OutputValidation(value=data)

    def _problem(self, data: Any) -> str | None:
        if self._adapter is not None:
            try:
                self._adapter.validate_python(data)
            except ValidationError as exc:
                return _summary(exc)
            return None
        assert self._checker is not None
        errors = sorted(self._checker.iter_errors(data), key=lambda e: list(e.path))[:3]
        return "; ".join(f"{_path(e.path)}: {e.message}" for e in errors) or None

    def partial(self, text: str) -> Any:
        """The value a streamed answer's text so far describes (``None`` before any)."""
        try:
            data = from_json(_strip_fence(text.strip()) or "null", allow_partial="trailing-strings")
        except ValueError:
            return None
        return data.get(_WRAP_KEY) if self.wrapped and isinstance(data, dict) else data

    def from_json(self, data: Any) -> Any:
        """The typed value of a stored JSON value (the JSON itself for a schema spec)."""
        if self._adapter is None:
            return data
        return self._adapter.validate_python(data)


def _describe(output_type: Any, argument: str) -> tuple[TypeAdapter[Any], dict[str, Any], str, str]:
    if output_type is None or output_type is str:
        raise UserError(f"{argument}: str is the plain answer; give a structured type")
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        schema = adapter.json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        first = str(exc).splitlines()[0]
        raise UserError(
            f"{argument}={output_type!r} cannot be described as a JSON schema: {first}"
        ) from None
    name = getattr(output_type, "__name__", None) or "output"
    doc = (getattr(output_type, "__doc__", None) or "") if isinstance(output_type, type) else ""
    if doc and type(output_type).__doc__ == doc:
        doc = ""  # a builtin's own docstring says nothing about the answer
    return adapter, schema, name, doc.strip()


def _checked_schema(schema: Any, argument: str) -> tuple[dict[str, Any], str, str]:
    if not isinstance(schema, dict):
        raise UserError(f"{argument}: a JSON Schema must be an object, got {type(schema).__name__}")
    from jsonschema import Draft202012Validator, SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise UserError(f"{argument}: not a valid JSON Schema: {exc.message}") from None
    broken = _unresolved_ref(schema)
    if broken is not None:
        raise UserError(
            f"{argument}: the $ref {broken!r} does not point into the schema "
            "(only refs within it, such as '#/$defs/Name', are followed)"
        )
    return schema, str(schema.get("title") or "output"), str(schema.get("description") or "")


def _unresolved_ref(schema: dict[str, Any]) -> str | None:
    """The first ``$ref`` that does not resolve within ``schema`` (none is fetched)."""
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    resolver = Registry().resolver_with_root(DRAFT202012.create_resource(schema))
    pending: list[Any] = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    return ref
            pending.extend(item.values())
    return None


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs")
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
        "additionalProperties": False,
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _strip_fence(text: str) -> str:
    if text.startswith("```"):
        body = text[3:].removesuffix("```")
        return body.split("\n", 1)[1] if "\n" in body else body
    return text


def _summary(exc: ValidationError) -> str:
    errors = exc.errors()[:3]
    return "; ".join(f"{_path(e['loc'])}: {e['msg']}" for e in errors)


def _path(loc: Any) -> str:
    return ".".join(map(str, loc)) or "<root>"


class PartialOutput:
    """A streamed structured answer: its text (or output-tool arguments) so far, parsed."""

    __slots__ = ("last", "spec", "text")

    def __init__(self, spec: OutputSpec) -> None:
        self.spec, self.text = spec, ""
        self.last: Any = None

    def feed(self, delta: ModelDelta) -> Any:
        """The new partial value after ``delta``; None when it shows nothing new."""
        if delta.kind == "reasoning_delta":
            return None
        self.text += delta.text if delta.kind == "text_delta" else delta.arguments
        value = self.spec.partial(self.text)
        if value is None or value == self.last:
            return None
        self.last = value
        return value


def restored_output(given: OutputSpec | None, schema: dict[str, Any] | None) -> OutputSpec | None:
    """The output type of a restored run: the caller's, else the one stored with the run.

    A run that began with a plain answer stays plain whatever type the caller has now.
    """
    if schema is None:
        return None
    return given if given is not None else OutputSpec.from_stored(schema)
