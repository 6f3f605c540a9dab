"""Defining tools: schemas from hints and docstrings, return conversion, make_tool, registry."""

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from ponder.exceptions import UserError
from ponder.messages import ToolCallPart
from ponder.tools import (
    ArgumentError,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    make_tool,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Longer explanation that
    spans lines.

    Args:
        a: The first number.
        b (int): The second number,
            continued on the next line.

    Returns:
        The sum.
    """
    return a + b


class Query(BaseModel):
    """Search the index."""

    text: str = Field(description="What to look for.")
    limit: int = 3
    mode: Literal["exact", "fuzzy"] = "fuzzy"


@tool(name="search", timeout=5.0, requires_approval=True, idempotent=True, max_concurrency=2)
async def search_index(ctx: ToolContext, query: Query) -> str:
    return f"{ctx.tool_name}/{ctx.call_id}: {query.text} x{query.limit} ({query.mode})"


def run(t: Tool, arguments: str, **options: Any) -> Any:
    executor = ToolExecutor(ToolRegistry([t]), **options)
    call = ToolCallPart.from_raw("c1", t.name, arguments)
    return asyncio.run(executor.run_call(call, run_id="r"))


def test_schema_and_description_come_from_hints_and_docstring() -> None:
    assert isinstance(add, Tool)
    assert add.name == "add"
    assert add.description == "Add two integers.\n\nLonger explanation that\nspans lines."
    assert add.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "The first number."},
            "b": {
                "type": "integer",
                "description": "The second number, continued on the next line.",
            },
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert add.definition.name == "add"


def test_options_are_kept_on_the_tool() -> None:
    assert (search_index.name, search_index.timeout, search_index.max_concurrency) == (
        "search",
        5.0,
        2,
    )
    assert search_index.requires_approval and search_index.idempotent


def test_a_single_model_parameter_is_the_whole_schema() -> None:
    params = search_index.parameters
    assert params["properties"]["text"] == {"type": "string", "description": "What to look for."}
    assert params["properties"]["mode"]["enum"] == ["exact", "fuzzy"]
    assert params["required"] == ["text"]
    assert search_index.description == "Search the index."
    outcome = run(search_index, '{"text": "cats", "limit": "5"}')
    assert outcome.message.content == "search/c1: cats x5 (fuzzy)"


def test_optional_literal_and_nested_parameters() -> None:
    class Point(BaseModel):
        x: int
        y: int

    @tool
    def place(point: Point, label: str | None = None, kind: Literal["a", "b"] = "a") -> str:
        """Place a point."""
        return f"{point.x},{point.y} {label} {kind}"

    props = place.parameters["properties"]
    assert props["kind"]["enum"] == ["a", "b"]
    assert place.parameters["required"] == ["point"]
    assert run(place, '{"point": {"x": "1", "y": 2}}').message.content == "1,2 None a"
    bad = run(place, '{"point": {"x": 1}, "kind": "c"}')
    assert bad.status == "invalid_arguments"
    assert "- point.y: missing (expected an integer)" in bad.message.content
    assert '- kind: expected one of "a", "b", received string \'c\'' in bad.message.content


@dataclass
class Pair:
    left: int
    right: int


@pytest.mark.parametrize(
    ("value", "output", "data"),
    [
        ("plain", "plain", None),
        (None, "(no output)", None),
        ({"k": [1, 2]}, '{"k": [1, 2]}', {"k": [1, 2]}),
        (7, "7", 7),
        (Pair(1, 2), '{"left": 1, "right": 2}', {"left": 1, "right": 2}),
        (ToolResult.ok("given", data={"x": 1}), "given", {"x": 1}),
    ],
)
def test_return_values_become_results(value: Any, output: str, data: Any) -> None:
    @tool
    def give() -> Any:
        """Return something."""
        return value

    outcome = run(give, "{}")
    assert (outcome.status, outcome.message.content, outcome.result.data) == ("ok", output, data)


def test_an_exception_becomes_an_error_result_naming_its_type() -> None:
    @tool
    async def explode() -> str:
        """Fail."""
        raise KeyError("missing-thing")

    outcome = run(explode, "")
    assert outcome.status == "error"
    assert outcome.result.error == "KeyError: 'missing-thing'"
    assert outcome.message.content == "Error: KeyError: 'missing-thing'"
    assert outcome.message.is_error


def test_sync_functions_run_in_a_thread_unless_told_otherwise() -> None:
    @tool
    def where() -> str:
        """Name the thread."""
        return threading.current_thread().name

    @tool(run_in_thread=False)
    def inline() -> str:
        """Name the thread."""
        return threading.current_thread().name

    assert run(where, "{}").message.content != threading.main_thread().name
    assert run(inline, "{}").message.content == threading.main_thread().name


def test_make_tool_with_a_context_handler_validates_against_the_schema() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    async def handler(ctx: ToolContext, args: dict[str, Any]) -> str:
        seen.append((ctx.call_id, args))
        return "done"

    raw = make_tool(
        "raw",
        "A raw tool.",
        {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "string", "default": "x"}},
            "required": ["n"],
        },
        handler,
        timeout=2.0,
    )
    assert run(raw, '{"n": "4"}').message.content == "done"
    assert seen == [("c1", {"n": 4, "s": "x"})]
    bad = run(raw, '{"n": "four"}')
    assert bad.status == "invalid_arguments"
    assert "- n: expected an integer, received string 'four'" in bad.message.content


def test_make_tool_with_a_keyword_handler_and_a_custom_validator() -> None:
    def validator(args: dict[str, Any]) -> dict[str, Any]:
        if "word" not in args:
            raise ArgumentError("give a word")
        return {"word": str(args["word"]).upper()}

    shout = make_tool(
        "shout",
        "Shout.",
        {"type": "object", "properties": {"word": {"type": "string"}}},
        lambda word: word + "!",
        validator=validator,
    )
    assert run(shout, '{"word": "hi"}').message.content == "HI!"
    assert "- give a word" in run(shout, "{}").message.content


@pytest.mark.parametrize(
    "build",
    [
        lambda: make_tool("bad name", "", {"type": "object"}, lambda: None),
        lambda: make_tool("x" * 65, "", {"type": "object"}, lambda: None),
        lambda: make_tool("arr", "", {"type": "array"}, lambda: None),
        lambda: make_tool("t", "", {"type": "object"}, lambda: None, timeout=0),
        lambda: make_tool("t", "", {"type": "object"}, lambda: None, max_concurrency=0),
    ],
)
def test_make_tool_refuses_bad_definitions(build: Any) -> None:
    with pytest.raises(UserError):
        build()


def test_unusable_signatures_are_user_errors() -> None:
    def star(*values: int) -> None:
        """Bad."""

    def late(a: int, ctx: ToolContext) -> None:
        """Bad."""

    def unresolved(a: "NoSuchType") -> None:  # type: ignore[name-defined]  # noqa: F821
        """Bad."""

    cases: list[tuple[Callable[..., Any], str]] = [
        (star, "named parameter"),
        (late, "must come first"),
        (unresolved, "type hints"),
    ]
    for fn, fragment in cases:
        with pytest.raises(UserError, match=fragment):
            tool(fn)


def test_registry_refuses_duplicates_and_merges() -> None:
    registry = ToolRegistry([add, search_index])
    assert registry.names == ("add", "search")
    assert [d.name for d in registry.definitions()] == ["add", "search"]
    assert registry.get("add") is add and registry.get("nope") is None
    assert "add" in registry and len(registry) == 2

    with pytest.raises(UserError, match="duplicate tool name 'add'"):
        registry.add(tool(name="add")(lambda: None))

    def extra() -> str:
        """A plain function becomes a tool."""
        return "x"

    merged = registry.merged([extra])
    assert merged.names == ("add", "search", "extra") and registry.names == ("add", "search")
    with pytest.raises(UserError, match="duplicate tool name 'search'"):
        registry.merged([search_index])
    with pytest.raises(UserError, match="not a tool"):
        ToolRegistry([42])  # type: ignore[list-item]


def test_registry_offers_its_tools_then_the_builtins_in_one_kept_tuple() -> None:
    registry = ToolRegistry([add, search_index])
    stop = tool(name="add", description="A built-in.")(lambda: None).definition  # same name
    first = registry.offered_with([stop])
    assert [d.name for d in first] == ["search", "add"] and first[-1] is stop
    assert registry.offered_with((stop,)) is first  # the same built-ins: the same tuple
    assert registry.offered_with(()) == tuple(registry.definitions())

    def extra() -> str:
        """Registered later."""
        return "x"

    registry.add(extra)
    assert [d.name for d in registry.offered_with([stop])] == ["search", "extra", "add"]


class Tally(BaseModel):
    count: int = 0


def test_stateful_tools_declare_plain_data_state() -> None:
    @tool(state_type=Tally)
    def bump(ctx: ToolContext) -> int:
        """Count calls."""
        ctx.state.count += 1
        return int(ctx.state.count)

    assert bump.new_state() == Tally()
    assert add.new_state() is None
    assert bump.parameters["properties"] == {}


def test_a_parameter_without_a_json_schema_is_named() -> None:
    class Socketish:
        pass

    def connect(host: str, conn: Socketish) -> str:
        """Connect somewhere."""
        return host

    with pytest.raises(UserError, match=r"parameter 'conn' has type Socketish"):
        tool(connect)


def test_a_tool_without_a_docstring_warns() -> None:
    def undocumented(a: int) -> int:
        return a

    with pytest.warns(UserWarning, match="no docstring"):
        tool(undocumented)
    tool(description="Returns a.")(undocumented)  # a description is enough
