"""A set of tools with unique names: what a run offers the model and can execute."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ponder.exceptions import UserError
from ponder.tools.decorator import tool as make_function_tool
from ponder.tools.definition import ToolDefinition
from ponder.tools.tool import Tool

__all__ = ["ToolRegistry"]

_OFFERED_KEPT = 16
"""At most this many offered tuples are kept per registry (a few built-in sets in practice)."""


class _Offered(NamedTuple):
    builtins: tuple[ToolDefinition, ...]
    """Holds the built-ins whose ids are the key, so no other object can take those ids."""
    tools: tuple[ToolDefinition, ...]


class ToolRegistry:
    """Tools by name; adding a second tool with a taken name raises `UserError`.

    Plain functions are accepted and turned into tools with ``@tool``'s defaults.
    """

    __slots__ = ("_definitions", "_offered", "_tools")

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._definitions: tuple[ToolDefinition, ...] | None = None
        self._offered: dict[tuple[int, ...], _Offered] = {}
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
        self._offered.clear()
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
        return list(self._frozen_definitions())

    def _frozen_definitions(self) -> tuple[ToolDefinition, ...]:
        if self._definitions is None:
            self._definitions = tuple(t.definition for t in self._tools.values())
        return self._definitions

    def offered_with(self, builtins: Sequence[ToolDefinition]) -> tuple[ToolDefinition, ...]:
        """These tools' definitions (less any a built-in of its name replaces), then ``builtins``.

        Kept per distinct ``builtins`` (by identity), so runs that offer the same tools share
        one tuple instead of each building a list.
        """
        key = tuple(map(id, builtins))
        found = self._offered.get(key)
        if found is None:
            if len(self._offered) >= _OFFERED_KEPT:
                self._offered.clear()
            names = {b.name for b in builtins}
            tools = tuple(t for t in self._frozen_definitions() if t.name not in names)
            found = self._offered[key] = _Offered(tuple(builtins), (*tools, *builtins))
        return found.tools

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
