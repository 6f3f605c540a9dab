"""Fuzzed tool calls: whatever a model sends, the executor answers every call and never raises."""

import asyncio
import json
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from ponder.messages import ToolCallPart
from ponder.tools import ToolExecutor, ToolOutcome, ToolRegistry, make_tool, tool

STATUSES = {"ok", "error", "timeout", "invalid_arguments", "unknown_tool", "cancelled"}


class Item(BaseModel):
    name: str
    qty: int = 1


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def order(items: list[Item], rush: bool = False, note: str | None = None) -> str:
    """Place an order."""
    return f"{len(items)} {rush} {note}"


@tool
def pick(mode: Literal["a", "b"], ratio: float = 1.0, tags: dict[str, int] | None = None) -> str:
    """Pick a mode."""
    return f"{mode} {ratio} {tags}"


raw_tool = make_tool(
    "raw",
    "A hand-written schema.",
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 10},
            "s": {"type": "string", "pattern": "^[a-z]+$"},
            "xs": {"type": "array", "items": {"type": "number"}, "maxItems": 3},
        },
        "required": ["n"],
        "additionalProperties": False,
    },
    lambda n, s="", xs=(): f"{n}{s}{len(xs)}",
)

EXECUTOR = ToolExecutor(ToolRegistry([add, order, pick, raw_tool]), default_timeout=5)
NAMES = st.sampled_from(["add", "order", "pick", "raw", "nope", ""])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["2", "true", "0x1", "1e5", "a", "fast"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "items", "name", "qty", "n", "s", "xs", "mode"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
argument_objects = st.dictionaries(
    st.sampled_from(
        ["a", "b", "items", "rush", "note", "mode", "ratio", "tags", "n", "s", "xs", "zz"]
    ),
    json_values,
    max_size=5,
)


def mangle(text: str, cut: int, junk: str) -> str:
    """Damage valid JSON the ways models do: cut it short, add junk, fence it."""
    return f"```json\n{text[: max(cut, 0)]}{junk}\n```" if cut % 3 == 0 else text[:cut] + junk


raw_texts = (
    st.text(max_size=60)
    | argument_objects.map(json.dumps)
    | st.builds(
        mangle,
        argument_objects.map(json.dumps),
        st.integers(-5, 80),
        st.sampled_from(["", ",", "}", ",}", "]", "\\"]),
    )
)


def run(calls: list[ToolCallPart]) -> list[ToolOutcome]:
    return asyncio.run(EXECUTOR.run_batch(calls, run_id="fuzz", states={}))


def check(calls: list[ToolCallPart], outcomes: list[ToolOutcome]) -> None:
    assert [o.call.id for o in outcomes] == [c.id for c in calls]
    for outcome in outcomes:
        assert outcome.status in STATUSES
        assert outcome.message.call_id == outcome.call.id
        assert outcome.message.is_error == (outcome.status != "ok")
        assert outcome.message.content
        if outcome.status == "invalid_arguments":
            assert outcome.message.content.endswith("Fix the arguments and call the tool again.")
        outcome.message.model_dump_json()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, raw_texts), min_size=1, max_size=6))
def test_fuzzed_argument_text_never_escapes(pairs: list[tuple[str, str]]) -> None:
    calls = [ToolCallPart.from_raw(f"c{i}", name, text) for i, (name, text) in enumerate(pairs)]
    check(calls, run(calls))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, argument_objects), min_size=1, max_size=6))
def test_fuzzed_argument_values_never_escape(pairs: list[tuple[str, dict[str, Any]]]) -> None:
    calls = [ToolCallPart.from_args(f"c{i}", name, args) for i, (name, args) in enumerate(pairs)]
    check(calls, run(calls))


@settings(deadline=None)
@given(st.integers(-(2**60), 2**60), st.integers(-(2**60), 2**60), st.booleans())
def test_valid_integers_in_any_accepted_form_add_up(a: int, b: int, as_text: bool) -> None:
    args = {"a": str(a) if as_text else a, "b": b}
    (outcome,) = run([ToolCallPart.from_args("c", "add", args)])
    assert (outcome.status, outcome.message.content) == ("ok", str(a + b))
