"""A set of tools with unique names: what a run offers the model and can execute."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ponder.exceptions import UserError
from ponder.tools.decorator import tool as make_function_tool
from ponder.tools.definition import ToolDefinition
from ponder.tools.tool import Tool

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """Tools by name; adding a second tool with a taken name raises `UserError`.

    Plain functions are accepted and turned into tools with ``@tool``'s defaults.
    """

    __slots__ = ("_definitions", "_tools")

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._definitions: tuple[ToolDefinition, ...] | None = None
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Register one tool (or function); returns the `Tool`."""
        if isinstance(item, Tool):
            found = item
        elif callable(item):
            found = make_function_tool(item)
        else:
            raise UserError(f"not a tool: {item!r} (use @tool or make_tool)")
        if found.name in self._tools:
            raise UserError(
                f"duplicate tool name {found.name!r}: another tool already uses it; "
                "rename one with @tool(name=...)"
            )
        self._tools[found.name] = found
        self._definitions = None
        return found

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in registration order."""
        return tuple(self._tools)

    def definitions(self) -> list[ToolDefinition]:
        """What the model is told about every tool, in registration order.

        Built once (definitions are frozen), not for every run that asks.
        """
        if self._definitions is None:
            self._definitions = tuple(t.definition for t in self._tools.values())
        return list(self._definitions)

    def merged(self, other: Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
        """A new registry holding these tools and ``other``; a name collision raises."""
        registry = ToolRegistry(self._tools.values())
        for item in other:
            registry.add(item)
        return registry

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"
