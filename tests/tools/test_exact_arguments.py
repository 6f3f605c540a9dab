"""Arguments of exactly the declared bare types skip conforming and validation.

The shortcut must be invisible: for any arguments, a tool whose parameters are bare
``int``, ``str`` and ``bool`` validates them exactly as the same tool does when one
parameter type (``float``) keeps it on the full path. The shortcut coerces ``"2"`` and
``"true"`` as conforming does; defaults, extra keys, constrained types and anything
refused still go through conforming and pydantic.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from ponder.tools import ArgumentError, tool


@tool
def exact(count: int, name: str, flag: bool) -> str:
    """Bare types only: the shortcut applies."""
    return ""


@tool
def full(count: int, name: str, flag: bool, ratio: float = 0.5) -> str:
    """One float parameter: always the full path."""
    return ""


def _outcome(validate: Any, args: dict[str, Any]) -> Any:
    try:
        return validate(dict(args))
    except ArgumentError as exc:
        return [(i.path, i.message) for i in exc.issues]


_values = st.one_of(
    st.integers(-(2**70), 2**70),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.sampled_from(["3", "true", "1e3", " 7 "]),
)


@given(st.dictionaries(st.sampled_from(["count", "name", "flag", "other"]), _values, max_size=4))
def test_the_shortcut_validates_as_the_full_path(args: dict[str, Any]) -> None:
    assert exact.validator is not None and full.validator is not None
    got = _outcome(exact.validator, args)
    expected = _outcome(full.validator, args)
    if isinstance(expected, dict):
        expected.pop("ratio")
    else:  # the same issues, but for the extra parameter the messages name
        expected = [(path, message.replace(", ratio", "")) for path, message in expected]
    assert got == expected


def test_exact_arguments_pass_unchanged_and_others_are_still_coerced() -> None:
    assert exact.validator is not None
    assert exact.validator({"count": 2, "name": "x", "flag": True}) == {
        "count": 2,
        "name": "x",
        "flag": True,
    }
    assert exact.validator({"count": "2", "name": "x", "flag": "true"}) == {
        "count": 2,
        "name": "x",
        "flag": True,
    }
    with pytest.raises(ArgumentError, match="count"):
        exact.validator({"count": True, "name": "x", "flag": True})


def test_constrained_and_defaulted_parameters_keep_the_full_path() -> None:
    @tool
    def positive(n: Annotated[int, Field(gt=0)]) -> int:
        """A constrained integer."""
        return n

    @tool
    def defaulted(n: int, m: int = 5) -> int:
        """A default to fill."""
        return n + m

    assert positive.validator is not None and defaulted.validator is not None
    with pytest.raises(ArgumentError, match="greater than 0"):
        positive.validator({"n": 0})
    assert defaulted.validator({"n": 1}) == {"n": 1, "m": 5}
