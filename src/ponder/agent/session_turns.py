"""The turns of one session: one at a time, and kept in the process when there is no store.

Two turns of one session started together would both continue the session's last turn,
and whichever finished first would drop out of the session. `turn_lock` serialises them
within the process: the later turn waits for the earlier one and continues from it.

A ``session_id`` without a store keeps the session in the process: `kept_sessions` holds
each session's last completed turn (its messages and its stateful tools' states) per
agent, for the most recent `KEPT_SESSIONS` sessions, and the next turn of the session
continues from it — as with a store, but gone when the process ends.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ponder.messages import Message

__all__ = ["KEPT_SESSIONS", "KeptSessions", "KeptTurn", "kept_sessions", "turn_lock"]

KEPT_SESSIONS = 1000
"""Sessions an agent without a store remembers; the least recently used is forgotten."""

_locks: weakref.WeakValueDictionary[tuple[int, int, str], asyncio.Lock] = (
    weakref.WeakValueDictionary()
)
_kept: weakref.WeakKeyDictionary[object, KeptSessions] = weakref.WeakKeyDictionary()
"""Each agent's kept sessions, by the agent (any object that owns sessions)."""


def turn_lock(owner: object, session_id: str) -> asyncio.Lock:
    """The lock a turn of ``session_id`` holds from reading the session to its end.

    ``owner`` is where the session lives (the store, or the agent without one); one lock
    per owner, session and event loop, alive while a turn holds or awaits it.
    """
    key = (id(owner), id(asyncio.get_running_loop()), session_id)
    lock = _locks.get(key)
    if lock is None:
        lock = _locks[key] = asyncio.Lock()
    return lock


@dataclass(frozen=True, slots=True)
class KeptTurn:
    """A session's last completed turn, as the next turn continues it."""

    messages: tuple[Message, ...]
    tool_states: dict[str, Any]


class KeptSessions:
    """The last turn of each of an agent's recent sessions (no store)."""

    def __init__(self, limit: int = KEPT_SESSIONS) -> None:
        self.limit = limit
        self._turns: OrderedDict[str, KeptTurn] = OrderedDict()

    def get(self, session_id: str) -> KeptTurn | None:
        """The session's last turn, if it is remembered."""
        turn = self._turns.get(session_id)
        if turn is not None:
            self._turns.move_to_end(session_id)
        return turn

    def keep(self, session_id: str, turn: KeptTurn) -> None:
        """Remember ``turn`` as the session's last; forget the oldest beyond the limit."""
        self._turns[session_id] = turn
        self._turns.move_to_end(session_id)
        while len(self._turns) > self.limit:
            self._turns.popitem(last=False)


def kept_sessions(agent: object) -> KeptSessions:
    """The sessions ``agent`` keeps in the process."""
    found = _kept.get(agent)
    if found is None:
        found = _kept[agent] = KeptSessions()
    return found
