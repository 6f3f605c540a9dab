"""Which run an MCP server's notifications and requests belong to.

The toolset's servers are shared by every run of an agent, but a server's logs,
progress, sampling and elicitation requests belong to one run. Each run registers a
`RunBinding` for its lifetime. What arrives on a session lent to a run goes to that run
(see `ponder.mcp.pool`), and progress to the run whose call sent its token; a request is
answered only while that run has a call in flight on the server, else refused. What
arrives on an idle session is attributed to no run: a log is shown to none (its data may
be another user's), and news of the server itself (connected, failed, tools changed: no
user data) goes to every bound run. That news, when no run is bound, is kept (a bounded
number) for the next run that binds, so a server that failed between runs is reported.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast, get_args

from ponder.events import Event, McpEvent, McpEventType

if TYPE_CHECKING:
    from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest, InputHold
    from ponder.models.base import Model, Usage

__all__ = ["Bindings", "ElicitationHandler", "RunBinding", "to_mcp_event"]

ElicitationHandler = Callable[["ElicitationRequest"], Awaitable["ElicitationAnswer"]]
_KEPT_ORPHANS = 50
_TYPES = frozenset(get_args(McpEventType))
_PRIVATE: frozenset[McpEventType] = frozenset({"log", "progress", "sampling", "elicitation"})
"""Event types that may carry a user's data: only ever delivered to the run they belong to."""


@dataclass(eq=False)
class RunBinding:
    """What one run lends the MCP client: its event sink, model and answering callbacks."""

    run_id: str
    model: Model | None = None
    """The model that answers the servers' sampling requests (None = sampling refused)."""
    sampling_limit: int = 0
    """Sampling requests this run answers at most."""
    elicit: ElicitationHandler | None = None
    """Asks the user for a server's elicitation (None = held, or declined without `hold`)."""
    hold: InputHold | None = None
    """Where questions wait when no one answers live: the run suspends on them."""
    add_usage: Callable[[Usage], None] | None = None
    """Adds the tokens a sampling request used to the run's usage."""
    sampling_count: int = 0
    sink: Callable[[Event], None] | None = None
    calls: dict[str, list[str]] = field(default_factory=dict)
    """Server → ids of this run's tool calls in flight there, oldest first."""
    _pending: list[Event] = field(default_factory=list)

    def current_call(self, server: str) -> str | None:
        """The latest of this run's calls in flight on ``server`` (what a request belongs to)."""
        found = self.calls.get(server)
        return found[-1] if found else None

    def deliver(self, event: Event) -> None:
        """Give ``event`` to the run, or keep it until `attach`."""
        if self.sink is not None:
            self.sink(event)
        else:
            self._pending.append(event)

    def attach(self, sink: Callable[[Event], None]) -> None:
        """Start delivering to ``sink``; events kept so far go first, in order."""
        self.sink = sink
        pending, self._pending = self._pending, []
        for event in pending:
            sink(event)


class Bindings:
    """The runs bound to one toolset and the calls each has in flight per server."""

    def __init__(self) -> None:
        self._runs: dict[str, RunBinding] = {}
        self._orphans: deque[McpEvent] = deque(maxlen=_KEPT_ORPHANS)

    @contextmanager
    def bound(self, binding: RunBinding) -> Iterator[RunBinding]:
        """Register ``binding`` while the block runs; it first receives kept events."""
        self._runs[binding.run_id] = binding
        while self._orphans:
            binding.deliver(self._orphans.popleft())
        try:
            yield binding
        finally:
            if self._runs.get(binding.run_id) is binding:
                del self._runs[binding.run_id]

    @contextmanager
    def calling(self, server: str, run_id: str, call_id: str = "") -> Iterator[None]:
        """Mark a call of ``run_id`` in flight on ``server`` while the block runs."""
        binding = self._runs.get(run_id)
        own = binding.calls.setdefault(server, []) if binding is not None else []
        own.append(call_id)
        try:
            yield
        finally:
            own.remove(call_id)

    def get(self, run_id: str) -> RunBinding | None:
        """The binding of ``run_id``, if it is bound."""
        return self._runs.get(run_id)

    def asking(self, server: str, holder: str | None) -> RunBinding | None:
        """Who answers a request from ``server`` on a session lent to ``holder``, if anyone.

        Only a bound run with a call in flight on ``server``: a request on an idle session,
        or one that outlived its run's calls, cannot be told to belong to any question.
        """
        binding = self._runs.get(holder) if holder is not None else None
        if binding is None or binding.current_call(server) is None:
            return None
        return binding

    def deliver(self, holder: str | None, event: McpEvent) -> None:
        """Route ``event`` from a session lent to ``holder`` (None: an idle session)."""
        found = self._runs.get(holder) if holder is not None else None
        if found is not None:
            found.deliver(event)
            return
        if event.type in _PRIVATE:
            return  # nobody's to see: the operator still gets it from `MCPToolset.on_event`
        targets = list(self._runs.values())
        if not targets:
            self._orphans.append(event)
        for binding in targets:
            binding.deliver(event if len(targets) == 1 else dataclasses.replace(event))


def to_mcp_event(raw: dict[str, Any]) -> McpEvent | None:
    """The typed event for one of the client's ``{"kind": "mcp.<type>", ...}`` dicts."""
    name = str(raw.get("kind", "")).removeprefix("mcp.")
    if name not in _TYPES:
        return None
    data = {k: v for k, v in raw.items() if k not in ("kind", "server")}
    return McpEvent(type=cast(McpEventType, name), server=str(raw.get("server", "")), data=data)
