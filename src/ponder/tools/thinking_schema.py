"""Arguments of ``sequential_thinking``: the fields, their JSON Schema and their parser.

Every field has a snake_case name (the spec's) and the MCP reference server's camelCase
name as an alias. The parser reads untrusted arguments from a model and either returns a
`ThoughtInput` or every problem it found, in schema order, each naming the field, what
was received and what is expected. Coercion is deliberate: integer strings and
``"true"``/``"false"`` in any case are accepted; ``true`` for a number, arrays, hex,
fractions, ``"yes"``, ``1`` for a boolean are refused. ``null`` for an optional field means
absent; for a required field it is a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ponder.tools.coerce import MAX_SAFE_INTEGER, coerce_boolean, coerce_integer, describe_value

__all__ = [
    "FIELDS",
    "ArgumentProblem",
    "FieldSpec",
    "RevisionType",
    "Spelling",
    "ThinkingConfig",
    "ThoughtInput",
    "describe_problems",
    "parse_thought_arguments",
    "snake_case_parameters",
]

RevisionType = Literal["replace", "amend"]
Spelling = Literal["snake_case", "camelCase"]
FieldKind = Literal["text", "flag", "count", "label", "revision_type"]


@dataclass(frozen=True, slots=True)
class ThinkingConfig:
    """Limits and policy of one ``sequential_thinking`` tool."""

    max_thought_chars: int = 2000
    max_history: int = 1000
    """Thoughts kept per scope; the oldest are dropped first (reported as a warning)."""
    max_branches: int = 100
    """Distinct branch ids per scope; a call opening one more is refused."""
    max_branch_id_chars: int = 128
    include_branch_contents: bool = False
    """Add ``branch_contents`` (each branch's thoughts) to the result data."""
    max_branch_contents_chars: int | None = 8000
    """Cap on the thought text in ``branch_contents`` (``None``: no cap)."""
    strict: bool = False
    """Cross-field inconsistencies are errors (True) or warnings (False)."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One argument: snake_case name, camelCase alias, kind, whether it is required."""

    name: str
    alias: str
    kind: FieldKind
    required: bool = False


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("thought", "thought", "text", required=True),
    FieldSpec("next_thought_needed", "nextThoughtNeeded", "flag", required=True),
    FieldSpec("thought_number", "thoughtNumber", "count", required=True),
    FieldSpec("total_thoughts", "totalThoughts", "count", required=True),
    FieldSpec("is_revision", "isRevision", "flag"),
    FieldSpec("revises_thought", "revisesThought", "count"),
    FieldSpec("branch_from_thought", "branchFromThought", "count"),
    FieldSpec("branch_id", "branchId", "label"),
    FieldSpec("needs_more_thoughts", "needsMoreThoughts", "flag"),
    FieldSpec("revision_type", "revisionType", "revision_type"),
)
_KNOWN_KEYS = frozenset(k for f in FIELDS for k in (f.name, f.alias))
_FIELD_KEYS = tuple((spec, tuple(dict.fromkeys((spec.name, spec.alias)))) for spec in FIELDS)
"""Each field with the argument keys that may carry it (one when both spellings agree)."""


@dataclass(frozen=True, slots=True)
class ThoughtInput:
    """One validated call. ``total_thoughts`` is as sent (not yet raised)."""

    thought: str
    next_thought_needed: bool
    thought_number: int
    total_thoughts: int
    is_revision: bool = False
    revises_thought: int | None = None
    branch_from_thought: int | None = None
    branch_id: str | None = None
    needs_more_thoughts: bool = False
    revision_type: RevisionType | None = None
    ignored_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One thing wrong with the arguments."""

    field: str
    received: str
    expected: str

    def __str__(self) -> str:
        return f"{self.field}: received {self.received}; expected {self.expected}"


class _Invalid(Exception):
    """A value that does not fit its field; carries what was expected."""


def _expected(spec: FieldSpec, config: ThinkingConfig) -> str:
    match spec.kind:
        case "text":
            return (
                f"a non-empty string of at most {config.max_thought_chars} characters, "
                "not only whitespace"
            )
        case "flag":
            return 'a boolean (true or false; the strings "true"/"false" are accepted)'
        case "count":
            return f"an integer from 1 to {MAX_SAFE_INTEGER}"
        case "label":
            return f"a string of at most {config.max_branch_id_chars} characters"
        case "revision_type":
            return '"replace" or "amend"'


def _to_text(value: Any, config: ThinkingConfig) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > config.max_thought_chars:
        raise _Invalid
    return value


def _to_flag(value: Any, config: ThinkingConfig) -> bool:
    try:
        return coerce_boolean(value)
    except ValueError:
        raise _Invalid from None


def _to_count(value: Any, config: ThinkingConfig) -> int:
    try:
        number = coerce_integer(value)
    except ValueError:
        raise _Invalid from None
    if not 1 <= number <= MAX_SAFE_INTEGER:
        raise _Invalid
    return number


def _to_label(value: Any, config: ThinkingConfig) -> str:
    if not isinstance(value, str) or len(value) > config.max_branch_id_chars:
        raise _Invalid
    return value


def _to_revision_type(value: Any, config: ThinkingConfig) -> str:
    if isinstance(value, str) and value.strip().lower() in ("replace", "amend"):
        return value.strip().lower()
    raise _Invalid


_CONVERTERS: dict[FieldKind, Callable[[Any, ThinkingConfig], Any]] = {
    "text": _to_text,
    "flag": _to_flag,
    "count": _to_count,
    "label": _to_label,
    "revision_type": _to_revision_type,
}


def _read_field(
    spec: FieldSpec,
    spellings: tuple[str, ...],
    args: Mapping[str, Any],
    config: ThinkingConfig,
    spelling: Spelling,
) -> tuple[Any, ArgumentProblem | None]:
    """The converted value of one field (None when absent), or the problem with it."""
    keys = [k for k in spellings if k in args]
    if not keys and not spec.required:
        return None, None
    convert = _CONVERTERS[spec.kind]
    values: list[Any] = []
    for key in keys:
        raw = args[key]
        if raw is None and not spec.required:
            continue
        try:
            values.append(convert(raw, config))
        except _Invalid:
            return None, ArgumentProblem(key, describe_value(raw), _expected(spec, config))
    if len(values) == 2 and values[0] != values[1]:
        received = f"{describe_value(args[keys[0]])} and {describe_value(args[keys[1]])}"
        return None, ArgumentProblem(
            f"{keys[0]}/{keys[1]}", received, "one value; send only one spelling of the field"
        )
    if values:
        return values[0], None
    if spec.required:
        shown = spec.name if spelling == "snake_case" else spec.alias
        return None, ArgumentProblem(shown, "nothing (missing)", _expected(spec, config))
    return None, None


_SPEC_BY_KEY = {key: spec for spec, keys in _FIELD_KEYS for key in keys}
_REQUIRED_NAMES = frozenset(spec.name for spec in FIELDS if spec.required)


def _plain_input(args: Mapping[str, Any], config: ThinkingConfig) -> ThoughtInput | None:
    """The `ThoughtInput` of arguments that need no coercion, else None.

    Plain means: each field sent once, in one spelling, as exactly its JSON type and in
    range (a non-blank string, a boolean, an integer from 1), the required ones present
    and no revision type. `parse_thought_arguments` reads anything else field by field.
    """
    values: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in args.items():
        spec = _SPEC_BY_KEY.get(key)
        if spec is None:
            ignored.append(str(key))
            continue
        kind, kept = spec.kind, type(value)
        if kind == "count":
            is_plain = kept is int and 1 <= value <= MAX_SAFE_INTEGER
        elif kind == "flag":
            is_plain = kept is bool
        elif kind == "text":
            is_plain = (
                kept is str and len(value) <= config.max_thought_chars and bool(value.strip())
            )
        else:
            is_plain = kind == "label" and kept is str and len(value) <= config.max_branch_id_chars
        if not is_plain or spec.name in values:
            return None
        values[spec.name] = value
    if not _REQUIRED_NAMES <= values.keys():
        return None
    branch_id = values.pop("branch_id", None)
    return ThoughtInput(**values, branch_id=branch_id or None, ignored_keys=tuple(ignored))


def parse_thought_arguments(
    args: Mapping[str, Any], config: ThinkingConfig, spelling: Spelling = "snake_case"
) -> ThoughtInput | list[ArgumentProblem]:
    """Validate raw arguments: a `ThoughtInput`, or every problem in schema order.

    ``spelling`` chooses how a missing field is named in a problem.
    """
    if type(args) is not dict and not isinstance(args, Mapping):
        return [ArgumentProblem("arguments", describe_value(args), "a JSON object")]
    plain = _plain_input(args, config)
    if plain is not None:
        return plain
    values: dict[str, Any] = {}
    problems: list[ArgumentProblem] = []
    for spec, spellings in _FIELD_KEYS:
        if not spec.required and spellings[0] not in args and spellings[-1] not in args:
            continue  # an absent optional field (what `_read_field` would find)
        value, problem = _read_field(spec, spellings, args, config, spelling)
        if problem is not None:
            problems.append(problem)
        elif value is not None:
            values[spec.name] = value
    if problems:
        return problems
    ignored = tuple(str(k) for k in args if k not in _KNOWN_KEYS)
    branch_id = values.pop("branch_id", None)
    return ThoughtInput(**values, branch_id=branch_id or None, ignored_keys=ignored)


def describe_problems(
    problems: list[ArgumentProblem], tool_name: str, spelling: Spelling = "snake_case"
) -> str:
    """One message listing every problem, with a corrective hint."""
    names = [f.name if spelling == "snake_case" else f.alias for f in FIELDS[:4]]
    count = f"{len(problems)} problem" + ("s" if len(problems) > 1 else "")
    lines = [f"invalid arguments for {tool_name} ({count}):"]
    lines += [f"- {problem}" for problem in problems]
    lines.append(
        f"Hint: send {names[0]} (your reasoning as text), {names[1]} (true/false), "
        f"{names[2]} and {names[3]} (integers from 1); fix the fields above and call "
        "again. Nothing was recorded."
    )
    return "\n".join(lines)


def snake_case_parameters(config: ThinkingConfig) -> dict[str, Any]:
    """The JSON Schema the model is shown (snake_case names)."""
    count = {"type": "integer", "minimum": 1}
    flag = {"type": "boolean"}
    properties: dict[str, Any] = {
        "thought": {
            "type": "string",
            "minLength": 1,
            "maxLength": config.max_thought_chars,
            "description": "This step of your reasoning, in natural user-friendly language.",
        },
        "next_thought_needed": {**flag, "description": "True while more thinking is needed."},
        "thought_number": {**count, "description": "Number of this thought, from 1."},
        "total_thoughts": {**count, "description": "Current estimate of thoughts needed."},
        "is_revision": {**flag, "description": "This thought revises an earlier one."},
        "revises_thought": {**count, "description": "Number of the thought being revised."},
        "branch_from_thought": {**count, "description": "Thought this branch starts from."},
        "branch_id": {
            "type": "string",
            "maxLength": config.max_branch_id_chars,
            "description": "Label of the branch.",
        },
        "needs_more_thoughts": {**flag, "description": "More thoughts are needed than planned."},
        "revision_type": {
            "type": "string",
            "enum": ["replace", "amend"],
            "description": "replace (default): the revised thought is superseded; amend: adds.",
        },
    }
    return {
        "type": "object",
        "properties": properties,
        "required": [f.name for f in FIELDS if f.required],
    }
