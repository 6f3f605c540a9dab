"""Lenient parsing of argument text and schema-guided coercion of argument values."""

import pytest

from ponder.tools import ArgumentError, SchemaConformer, parse_arguments_lenient
from ponder.tools.coerce import coerce_number


def issues(error: ArgumentError) -> dict[str, str]:
    return {i.path: i.message for i in error.issues}


# -- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": 1, "b": "x"}',
        '```json\n{"a": 1, "b": "x"}\n```',
        '```\n{"a": 1, "b": "x"}\n```',
        '  {"a": 1, "b": "x",}  ',
        '```json\n{"a": 1, "b": "x",}\n```',
        '"{\\"a\\": 1, \\"b\\": \\"x\\"}"',
    ],
)
def test_lenient_forms_parse_to_the_same_object(raw: str) -> None:
    assert parse_arguments_lenient(raw) == {"a": 1, "b": "x"}


def test_empty_text_means_no_arguments() -> None:
    assert parse_arguments_lenient("") == {}
    assert parse_arguments_lenient("  \n") == {}
    assert parse_arguments_lenient("```json\n```") == {}


def test_trailing_commas_in_nested_arrays_and_objects_are_dropped() -> None:
    assert parse_arguments_lenient('{"a": [1, 2,], "b": {"c": 3,},}') == {
        "a": [1, 2],
        "b": {"c": 3},
    }


def test_commas_inside_strings_are_kept() -> None:
    raw = '{"text": "a,}  b,]", "q": "say \\",}\\"",}'
    assert parse_arguments_lenient(raw) == {"text": "a,}  b,]", "q": 'say ",}"'}


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"a": 1', "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        ('{"a": NaN}', "NaN is not valid JSON"),
        ('{"a": Infinity}', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ("42", "must be a JSON object"),
        ('"just text"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ('{"a": 1} trailing', "not valid JSON"),
    ],
)
def test_malformed_text_is_one_clear_issue(raw: str, fragment: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        parse_arguments_lenient(raw)
    assert len(caught.value.issues) == 1
    assert fragment in caught.value.issues[0].message
    assert caught.value.for_model("t").startswith("invalid arguments for tool 't':\n- ")


# -- conforming to a schema ------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "name": {"type": "string", "maxLength": 5},
        "mode": {"enum": ["fast", "slow"], "type": "string"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "inner": {"$ref": "#/$defs/Inner"},
    },
    "required": ["count"],
    "additionalProperties": False,
    "$defs": {
        "Inner": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
        }
    },
}


def conform(value: dict[str, object], **options: bool) -> object:
    return SchemaConformer(SCHEMA, **options).conform(value)


def test_strings_are_coerced_only_where_the_schema_asks() -> None:
    value: dict[str, object] = {
        "count": " 2 ",
        "ratio": "2.5",
        "flag": "TRUE",
        "name": "12",
        "tags": ["1", 2],
        "maybe": "7",
        "inner": {"x": "3"},
    }
    assert conform(value) == {
        "count": 2,
        "ratio": 2.5,
        "flag": True,
        "name": "12",
        "tags": [1, 2],
        "maybe": 7,
        "inner": {"x": 3},
    }


def test_integral_floats_are_integers_but_fractions_are_not() -> None:
    assert conform({"count": 3.0}) == {"count": 3}
    with pytest.raises(ArgumentError) as caught:
        conform({"count": 3.5})
    assert issues(caught.value) == {"count": "expected an integer, received number 3.5"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("count", True, "expected an integer, received true"),
        ("count", "0x10", "expected an integer, received string '0x10'"),
        ("count", [1], "expected an integer, received array"),
        ("count", "1.5", "expected an integer, received string '1.5'"),
        ("count", -1, "must be at least 0, received -1"),
        ("flag", 1, 'expected a boolean or "true"/"false", received number 1'),
        ("flag", "yes", 'expected a boolean or "true"/"false", received string \'yes\''),
        ("ratio", "nan", "expected a number, received string 'nan'"),
        ("ratio", False, "expected a number, received false"),
        ("name", 5, "expected a string, received number 5"),
        ("name", "toolong", "allows at most 5 character(s), received 7"),
        ("mode", "medium", 'expected one of "fast", "slow", received string \'medium\''),
        ("tags", "1,2", "expected an array, received string '1,2'"),
        ("maybe", "x", "expected an integer or null, received string 'x'"),
        ("inner", [], "expected an object, received array"),
    ],
)
def test_ambiguous_or_wrong_values_are_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        conform({"count": 1, field: value})
    assert issues(caught.value) == {field: message}


def test_every_issue_is_reported_with_its_path() -> None:
    with pytest.raises(ArgumentError) as caught:
        conform({"tags": [1, "x", True], "inner": {}, "extra": 1})
    assert issues(caught.value) == {
        "count": "missing (expected an integer)",
        "tags[1]": "expected an integer, received string 'x'",
        "tags[2]": "expected an integer, received true",
        "inner.x": "missing (expected an integer)",
        "extra": "unexpected field; remove it (allowed fields: count, ratio, flag, name, mode, "
        "tags, maybe, inner)",
    }


def test_defaults_are_filled_when_asked() -> None:
    assert conform({"count": 1}, fill_defaults=True) == {"count": 1, "maybe": None}
    assert conform({"count": 1}) == {"count": 1}


def test_a_schema_without_types_passes_values_through() -> None:
    conformer = SchemaConformer({"type": "object", "properties": {"any": {}}})
    assert conformer.conform({"any": [1, {"a": None}], "other": "kept"}) == {
        "any": [1, {"a": None}],
        "other": "kept",
    }


def test_union_of_objects_reports_the_closest_branch() -> None:
    schema = {
        "type": "object",
        "properties": {
            "shape": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"r": {"type": "number"}},
                        "required": ["r"],
                    },
                    {"type": "string"},
                ]
            }
        },
    }
    with pytest.raises(ArgumentError) as caught:
        SchemaConformer(schema).conform({"shape": {"r": "big"}})
    assert issues(caught.value) == {"shape.r": "expected a number, received string 'big'"}
    with pytest.raises(ArgumentError) as caught:
        SchemaConformer(schema).conform({"shape": 3})
    assert issues(caught.value) == {"shape": "expected an object or a string, received number 3"}


@pytest.mark.parametrize(
    ("raw", "expected"), [("2", 2), ("-2.5", -2.5), ("1e3", 1000.0), (".5", 0.5), (4, 4)]
)
def test_number_coercion_accepts_decimal_forms(raw: object, expected: float) -> None:
    assert coerce_number(raw) == expected


@pytest.mark.parametrize("raw", ["0x1f", "inf", "1_000", "", " ", "1e999", float("inf"), None])
def test_number_coercion_refuses_other_forms(raw: object) -> None:
    with pytest.raises(ValueError, match="expected a number"):
        coerce_number(raw)
