"""Hooks: functions an agent calls around model requests and for events.

``on_precompletion`` handlers may edit the request about to be sent, ``on_completion``
handlers may replace the response, ``on_event`` handlers see every event of a kind (or
``"*"``). Handlers run in ascending ``priority``; a ``block=True`` handler stops the
lower-priority ones after it. Each agent has its own registry and nothing is locked, so
concurrent runs never wait for each other's hooks. A handler's exception fails the run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from ponder.events import Event, EventKind
    from ponder.messages import Message
    from ponder.models.base import ModelResponse, ToolChoice, ToolDefinition

__all__ = ["Hooks", "ModelCall"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(slots=True)
class ModelCall:
    """A model request about to be sent; precompletion hooks may edit its fields."""

    run_id: str
    purpose: str
    messages: list[Message]
    tools: list[ToolDefinition]
    tool_choice: ToolChoice
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, order=True)
class _Handler:
    priority: int
    order: int
    block: bool = field(compare=False)
    fn: Callable[..., Any] = field(compare=False)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Hooks:
    """A per-agent registry of hook functions."""

    def __init__(self) -> None:
        self._events: dict[str, list[_Handler]] = {}
        self._pre: list[_Handler] = []
        self._post: list[_Handler] = []
        self._count = 0

    @property
    def has_event_handlers(self) -> bool:
        """True when any event handler is registered."""
        return bool(self._events)

    @property
    def has_precompletion(self) -> bool:
        """True when any precompletion handler is registered."""
        return bool(self._pre)

    @property
    def has_completion(self) -> bool:
        """True when any completion handler is registered."""
        return bool(self._post)

    def _handler(self, fn: Callable[..., Any], priority: int, block: bool) -> _Handler:
        self._count += 1
        return _Handler(priority, self._count, block, fn)

    def on_event(
        self, kind: EventKind | Literal["*"] = "*", *, priority: int = 10, block: bool = False
    ) -> Callable[[F], F]:
        """Register ``fn(event)`` for events of ``kind`` (``"*"`` = all)."""

        def register(fn: F) -> F:
            handlers = self._events.setdefault(kind, [])
            handlers.append(self._handler(fn, priority, block))
            handlers.sort()
            return fn

        return register

    def on_precompletion(self, *, priority: int = 10, block: bool = False) -> Callable[[F], F]:
        """Register ``fn(call: ModelCall)``; it may edit ``call.messages``/``call.tools``."""

        def register(fn: F) -> F:
            self._pre.append(self._handler(fn, priority, block))
            self._pre.sort()
            return fn

        return register

    def on_completion(self, *, priority: int = 10, block: bool = False) -> Callable[[F], F]:
        """Register ``fn(call, response)``; returning a ``ModelResponse`` replaces it."""

        def register(fn: F) -> F:
            self._post.append(self._handler(fn, priority, block))
            self._post.sort()
            return fn

        return register

    def remove(self, fn: Callable[..., Any]) -> bool:
        """Unregister ``fn`` wherever it was registered; True if it was."""
        found = False
        for handlers in (*self._events.values(), self._pre, self._post):
            kept = [h for h in handlers if h.fn is not fn]
            found = found or len(kept) != len(handlers)
            handlers[:] = kept
        for kind in [k for k, v in self._events.items() if not v]:
            del self._events[kind]
        return found

    async def dispatch(self, event: Event) -> None:
        """Run the handlers for ``event``'s kind, then the catch-all ones."""
        for kind in (event.kind, "*"):
            for handler in self._events.get(kind, ()):
                await _maybe_await(handler.fn(event))
                if handler.block:
                    return

    async def before_request(self, call: ModelCall) -> None:
        """Run precompletion handlers on ``call``."""
        for handler in self._pre:
            await _maybe_await(handler.fn(call))
            if handler.block:
                return

    async def after_response(self, call: ModelCall, response: ModelResponse) -> ModelResponse:
        """Run completion handlers; each may return a replacement response."""
        from ponder.models.base import ModelResponse

        for handler in self._post:
            replaced = await _maybe_await(handler.fn(call, response))
            if isinstance(replaced, ModelResponse):
                response = replaced
            if handler.block:
                break
        return response
