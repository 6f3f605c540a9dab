"""The turns of one session: one at a time, and kept in the process when there is no store.

Two turns of one session started together would both continue the session's last turn,
and whichever finished first would drop out of the session. `turn_lock` serialises them
within the process: the later turn waits for the earlier one and continues from it. With
a store, `session_lease` serialises them across processes too: a turn holds the session's
lease in the store from reading the session to its end, renewed while it runs; a turn of
another process waits for it (up to ``Store.turn_wait_seconds``, then `SessionLeaseError`
names the holder), and takes over the lease of a holder that died on this host or whose
lease expired. `refuse_after_suspended` stops a turn whose session's last turn waits for
approval or input: continuing past it would lose that turn once it is resumed. A turn
resumed later holds its session likewise (`resumed_turn`), and is refused once a later
turn of the session completed: finishing it would drop that turn.

A ``session_id`` without a store keeps the session in the process: `kept_sessions` holds
each session's last completed turn (its messages and its stateful tools' states) per
agent, for the most recent `KEPT_SESSIONS` sessions, and the next turn of the session
continues from it — as with a store, but gone when the process ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ponder.agent.run.leases import is_dead_here, lease_owner
from ponder.agent.run.shielding import settled
from ponder.exceptions import SessionLeaseError, StoreError, UserError

if TYPE_CHECKING:
    from ponder.messages import Message
    from ponder.store.base import RunRecord, Store

__all__ = [
    "KEPT_SESSIONS",
    "KeptSessions",
    "KeptTurn",
    "kept_sessions",
    "refuse_after_suspended",
    "resumed_turn",
    "session_lease",
    "turn_lock",
]

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


@contextlib.asynccontextmanager
async def session_lease(store: Store, session_id: str) -> AsyncIterator[None]:
    """Hold the session's turn lease in ``store`` for the block (see the module's doc).

    The lease is given back however the block ends; `SessionLeaseError` if another
    process still holds it after ``store.turn_wait_seconds``.
    """
    owner = lease_owner()
    await _take(store, session_id, owner)
    renewing = asyncio.create_task(_renew(store, session_id, owner))
    try:
        yield
    except BaseException:
        renewing.cancel()
        with contextlib.suppress(StoreError):  # the block's error is the one to see
            await settled(lambda: store.release_session(session_id, owner))
        raise
    renewing.cancel()
    held = await settled(lambda: store.release_session(session_id, owner))
    if held is not None:
        raise held  # the turn is over, but its caller was cancelled meanwhile


async def _take(store: Store, session_id: str, owner: str) -> None:
    """Wait for the session's lease, polling; take it over from a holder dead here."""
    started, pause = time.monotonic(), 0.05
    while True:
        holder = await _try(store, session_id, owner)
        if holder is None:
            return
        waited = time.monotonic() - started
        if waited >= store.turn_wait_seconds:
            raise SessionLeaseError(session_id, holder or None, round(waited, 1))
        await asyncio.sleep(min(pause, store.turn_wait_seconds - waited))
        pause = min(pause * 2, 1.0)


async def _try(store: Store, session_id: str, owner: str) -> str | None:
    """Take the lease once: None if taken, else who holds it (``""``: unknown)."""
    try:
        await store.acquire_session(session_id, owner, store.lease_seconds)
        return None
    except SessionLeaseError as busy:
        if busy.holder is None or not is_dead_here(busy.holder):
            return busy.holder or ""
        dead = busy.holder
    try:
        await store.acquire_session(session_id, owner, store.lease_seconds, takeover=dead)
        return None
    except SessionLeaseError as busy:  # another waiter took it over first
        return busy.holder or ""


async def _renew(store: Store, session_id: str, owner: str) -> None:
    """Extend the lease while the turn runs; stop once another process holds it."""
    while True:
        await asyncio.sleep(store.lease_seconds / 3)
        try:
            await store.acquire_session(session_id, owner, store.lease_seconds)
        except SessionLeaseError:
            return
        except StoreError:
            continue  # the store is unreachable for now: the lease may still be renewed


async def refuse_after_suspended(store: Store, session_id: str) -> None:
    """`UserError` if the session's last turn is suspended (waits for approval or input).

    A turn continues the session's last completed turn: one started past a suspended
    turn would drop out of the session once that turn is resumed and completes.
    """
    latest = await store.latest_turn(session_id)
    if latest is not None and latest.status == "suspended":
        raise UserError(
            f"session {session_id!r}: its last turn, run {latest.run_id!r}, is suspended "
            "(it waits for an approval or an answer); resume that run, or cancel it, "
            "before the session's next turn"
        )


@contextlib.asynccontextmanager
async def resumed_turn(store: Store, run_id: str) -> AsyncIterator[None]:
    """Hold the session of stored run ``run_id``, if it is a turn of one, while it resumes.

    `UserError` if a later turn of that session has completed since the run started.
    """
    try:
        stored = await store.load(run_id)
        session_id = stored.view.session_id
    except StoreError:
        session_id = None  # the resume itself reports what is wrong with the run
    if session_id is None:
        yield
        return
    async with turn_lock(store, session_id), session_lease(store, session_id):
        await _refuse_superseded(store, session_id, stored.record)
        yield


async def _refuse_superseded(store: Store, session_id: str, turn: RunRecord) -> None:
    """`UserError` if a turn of the session that began after ``turn`` has completed."""
    latest = await store.latest_in_session(session_id)
    if latest is None or latest == turn.run_id:
        return
    later = (await store.load(latest)).record
    if later.created > turn.created:
        raise UserError(
            f"run {turn.run_id!r} is a turn of session {session_id!r}, which has gone on "
            f"since (run {latest!r} completed after it began); resuming it would drop "
            "the later turns: start a new turn of the session instead"
        )


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
