"""`indented_json` writes what ``json.dumps(value, indent=2, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ponder.mcp.thinking.json_text import indented_json, indented_json_without_floats


class _Text(str):
    pass


VALUES: list[Any] = [
    {},
    [],
    (),
    "plain",
    5,
    None,
    False,
    [[]],
    ("a",),
    {"a": [], "b": {}},
    {
        "thoughtNumber": 1,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "branches": ["b2", 'é🙂\n"x\u2028\x00'],
        "thoughtHistoryLength": 1,
        "warnings": ["x"],
    },
    {"n": None, "f": 1.5, "nan": float("nan"), "i": -3, "big": 10**30},
    {"nest": {"x": [1, [2, {}], {"y": (1, 2)}]}},
    {7: "k", True: 2, None: 3, 2.5: 4, _Text("s"): _Text("v")},
]


@pytest.mark.parametrize("value", VALUES)
def test_indented_json_equals_json_dumps(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_indented_json_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError):
        indented_json({"x": object()})


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(k) or _has_float(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_float(v) for v in value)
    return False


@pytest.mark.parametrize(
    "value",
    [v for v in VALUES if not _has_float(v)]
    + [{"lone": "\ud800"}, {"node": {"seq": 3, "branch_id": None, "is_revision": False}}],
)
def test_indented_json_without_floats_equals_json_dumps(value: Any) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False)
    assert indented_json_without_floats(value) == expected
