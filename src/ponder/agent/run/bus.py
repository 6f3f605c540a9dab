"""`EventBus`: how one run's events are stamped and delivered.

Subscribers (the stream's sink, the store's event log, a tap) are plain callables that see
each event the moment it is emitted, in the order they subscribed; the agent's event hooks
are async and see it at the next `EventBus.flush`, in order. ``emit`` does both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from ponder.agent.hooks import Hooks
from ponder.agent.run.state import RunState
from ponder.events import Event

__all__ = ["EventBus", "EventSink"]

EventSink = Callable[[Event], None]


class EventBus:
    """Stamps one run's events (run id, sequence number, time) and delivers them."""

    __slots__ = ("_backlog", "clock", "hooks", "state", "subscribers")

    def __init__(
        self,
        state: RunState,
        hooks: Hooks,
        clock: Callable[[], float] = time.time,
        subscribers: Iterable[EventSink] = (),
    ) -> None:
        self.state = state
        self.hooks = hooks
        self.clock = clock
        """Stamps event times; a durable engine gives its deterministic clock."""
        self.subscribers: tuple[EventSink, ...] = tuple(subscribers)
        """A tuple: none is the shared empty one, which the collector does not track."""
        self._backlog: list[Event] | None = None
        """Events the hooks have not seen yet (only with event handlers)."""

    def subscribe(self, subscriber: EventSink) -> None:
        """Deliver every later event to ``subscriber`` too, after the earlier subscribers."""
        self.subscribers = (*self.subscribers, subscriber)

    @property
    def heard(self) -> bool:
        """Whether anything receives events: a subscriber or an event hook.

        The hot paths build no event that nothing receives; `skip` keeps the numbering as
        though it had been emitted.
        """
        return bool(self.subscribers) or self.hooks.has_event_handlers

    def skip(self) -> None:
        """Count an event that nothing would receive (see `heard`), without building it."""
        self.state.event_seq += 1

    def emit_now(self, event: Event) -> None:
        """Stamp ``event`` and give it to the subscribers; hooks see it at the next `flush`."""
        state = self.state
        state.event_seq += 1
        event.run_id = state.run_id
        event.seq = state.event_seq
        event.time = self.clock()
        for deliver in self.subscribers:
            deliver(event)
        if self.hooks.has_event_handlers:
            if self._backlog is None:
                self._backlog = []
            self._backlog.append(event)

    async def flush(self) -> None:
        """Give pending events to the hooks, in order."""
        backlog = self._backlog
        while backlog:
            event = backlog.pop(0)
            await self.hooks.dispatch(event)

    async def emit(self, event: Event) -> None:
        """Stamp, deliver, and run the hooks for ``event``."""
        self.emit_now(event)
        if self._backlog:
            await self.flush()

    def close(self) -> None:
        """Drop what the run no longer needs once it is over (its subscribers, the backlog)."""
        self.subscribers = ()
        self._backlog = None
