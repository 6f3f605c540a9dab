"""A top-level function's tool schema is built once, and again only when the function changes."""

from __future__ import annotations

from collections.abc import Callable

from ponder.tools import tool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_top_level_function_keeps_its_schema_across_tools() -> None:
    first, second = tool(add), tool(add)
    assert first is not second
    assert first.parameters is second.parameters
    assert tool(name="plus")(add).parameters == first.parameters


def test_a_changed_docstring_or_default_gives_a_new_schema() -> None:
    def scale(x: int, by: int = 2) -> int:
        """Scale x."""
        return x * by

    before = tool(scale)
    scale.__doc__ = "Scale x.\n\nArgs:\n    x: The number."
    scale.__defaults__ = (3,)
    after = tool(scale)
    assert after.parameters["properties"]["x"]["description"] == "The number."
    assert after.parameters["properties"]["by"]["default"] == 3
    assert "description" not in before.parameters["properties"]["x"]


def test_nested_functions_get_their_own_schema() -> None:
    def make() -> Callable[[int], str]:
        def convert(value: int) -> str:
            """Convert a value."""
            return str(value)

        return convert

    first, second = tool(make()), tool(make())
    assert first.parameters == second.parameters
    assert first.parameters is not second.parameters


def test_agents_given_the_same_function_share_its_tool() -> None:
    from ponder.agent import Agent
    from ponder.models import ScriptedModel

    first = Agent(ScriptedModel([]), tools=[add]).toolbox.base[0]
    second = Agent(ScriptedModel([]), tools=[add]).toolbox.base[0]
    assert first is second and first.name == "add"
