"""`json_encoder` writes exactly what ``json.dumps`` writes, and fails as it fails."""

from __future__ import annotations

import json
from json import encoder as stdlib_encoder
from typing import Any

import pytest

from ponder.jsontext import json_encoder

VALUES: list[Any] = [
    "text",
    "é ✓ \ud800",
    "",
    0,
    -7,
    2.5,
    1e300,
    float("nan"),
    float("inf"),
    -float("inf"),
    None,
    True,
    False,
    [],
    {},
    [1, (2, "x"), [None]],
    {"b": 1, "a": {"z": [None, 1.5]}, "é": "ü"},
]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"sort_keys": True},
    {"separators": (",", ":")},
    {"default": str},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_the_text_is_what_json_dumps_writes(options: dict[str, Any]) -> None:
    encode = json_encoder(**options)
    for value in VALUES:
        assert encode(value) == json.dumps(value, ensure_ascii=False, **options), value
    keyed = {1: "int", 2.5: "float", None: "none", False: "bool"}
    assert json_encoder()(keyed) == json.dumps(keyed, ensure_ascii=False)


def test_a_value_that_is_not_json_fails_as_json_dumps_fails() -> None:
    encode = json_encoder()
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"a": object()})
    assert json_encoder(default=repr)({"a": {1}}) == '{"a": "{1}"}'


def test_a_value_containing_itself_is_refused_with_json_dumps_error() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_encoder()(cyclic)
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        json_encoder()(deep)


def test_without_the_c_accelerator_the_standard_encoder_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdlib_encoder, "c_make_encoder", None)
    encode = json_encoder(sort_keys=True)
    assert encode({"b": 1, "a": [2]}) == '{"a": [2], "b": 1}'
