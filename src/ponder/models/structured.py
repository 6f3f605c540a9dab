"""Structured output: describing the expected JSON and reading it back from a response.

Adapters ask for structured output natively (``response_format``) where the provider has
it and otherwise through a forced tool call; either way the JSON ends up as the response
text, so `parse_structured` reads every provider's answer the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ponder.exceptions import StructuredOutputError, UserError
from ponder.messages import AssistantPart, TextPart, ToolCallPart
from ponder.models.base import ModelResponse, OutputSchema, ToolDefinition

__all__ = [
    "is_strict_schema",
    "output_schema",
    "output_tool",
    "parse_structured",
    "tool_name",
    "tool_output_to_text",
]

T = TypeVar("T", bound=BaseModel)


def output_schema(spec: type[BaseModel] | dict[str, Any] | OutputSchema) -> OutputSchema:
    """An `OutputSchema` from a pydantic model class, a JSON Schema dict or an `OutputSchema`."""
    if isinstance(spec, OutputSchema):
        return spec
    if isinstance(spec, type) and issubclass(spec, BaseModel):
        schema = OutputSchema.from_model(spec)
    elif isinstance(spec, dict):
        name = str(spec.get("title") or "output")
        schema = OutputSchema(name=name, json_schema=spec, description=spec.get("description", ""))
    else:
        raise UserError(
            f"structured output takes a pydantic model class or a JSON Schema dict, got {spec!r}"
        )
    return schema.model_copy(update={"strict": is_strict_schema(schema.json_schema)})


@overload
def parse_structured(response: ModelResponse, output_type: type[T]) -> T: ...
@overload
def parse_structured(response: ModelResponse, output_type: None = None) -> Any: ...
def parse_structured(response: ModelResponse, output_type: type[T] | None = None) -> T | Any:
    """Read the response text as JSON (validated by ``output_type`` when given).

    Raises `StructuredOutputError` (carrying the raw text) when the model's output is not
    valid JSON or does not validate; the caller may retry with the error shown to the model.
    """
    raw = response.text.strip()
    try:
        value = _loads(_strip_fence(raw))
    except json.JSONDecodeError as exc:
        raise StructuredOutputError(
            f"structured output is not valid JSON: {exc.msg} at position {exc.pos}",
            raw=raw,
            model_name=response.model_name,
        ) from None
    if output_type is None:
        return value
    try:
        return output_type.model_validate(value)
    except ValidationError as exc:
        raise StructuredOutputError(
            f"structured output does not match {output_type.__name__}: {_summary(exc)}",
            raw=raw,
            model_name=response.model_name,
        ) from None


def is_strict_schema(schema: Any) -> bool:
    """True if OpenAI strict mode accepts ``schema``: closed objects, every property required."""
    if not isinstance(schema, dict):
        return True
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        properties = properties if isinstance(properties, dict) else {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
    return all(is_strict_schema(sub) for sub in _subschemas(schema))


def _subschemas(schema: dict[str, Any]) -> list[Any]:
    subs: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            subs.extend(schema[key].values())
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(schema.get(key), list):
            subs.extend(schema[key])
    if isinstance(schema.get("items"), dict):
        subs.append(schema["items"])
    return subs


def _loads(text: str) -> Any:
    """JSON from ``text``, or from the one object it wraps in prose (JSON-in-text answers)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start <= 0 and end in (-1, len(text) - 1):
            raise
        return json.loads(text[start : end + 1])


def _strip_fence(text: str) -> str:
    if text.startswith("```") and text.endswith("```"):
        body = text[3:-3]
        return body.split("\n", 1)[1] if "\n" in body else body
    return text


def _summary(exc: ValidationError) -> str:
    errors = exc.errors()[:3]
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in errors)


def output_tool(schema: OutputSchema) -> ToolDefinition:
    """The tool a provider without native structured output is forced to call."""
    return ToolDefinition(
        name=tool_name(schema.name),
        description=schema.description or "Give the final answer in this exact structure.",
        parameters=schema.json_schema,
    )


def tool_output_to_text(response: ModelResponse, schema: OutputSchema) -> ModelResponse:
    """Turn the forced output-tool call into response text, so `parse_structured` reads it."""
    name = tool_name(schema.name)
    calls = [c for c in response.tool_calls if c.name == name]
    if not calls:
        return response
    parts: list[AssistantPart] = [
        p for p in response.parts if not isinstance(p, ToolCallPart | TextPart)
    ]
    parts.append(TextPart(text=calls[0].arguments))
    return response.model_copy(update={"parts": tuple(parts)})


def tool_name(name: str) -> str:
    """``name`` reduced to the characters providers accept in tool and schema names."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64]
    return cleaned or "output"
