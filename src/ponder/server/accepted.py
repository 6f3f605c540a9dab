"""The requests a server accepted, kept in its store so that no accepted run is lost.

Before ``POST /v1/runs`` answers, the request (prompt and history) is written to the
store's key-value table under `SCOPE` and the run's row exists (its lease is taken).
A run that stops before its first checkpoint — the server was killed a few milliseconds
after accepting it — is then started over from that request, on resume or when a server
starts on the store; and a starting server resumes only runs that a server accepted, never
ones that other programs keep in the same store.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ponder.agent.limits import UsageLimits
from ponder.exceptions import StoreError, UserError
from ponder.messages import Message, messages_from_json, messages_to_json
from ponder.server.runs import RunRecord, Turn
from ponder.store.base import Store
from ponder.store.memory import MemoryStore

if TYPE_CHECKING:
    from ponder.server.local_launcher import RunLauncher

__all__ = ["SCOPE", "AcceptedRequest", "recall", "remember", "start_accepted", "start_over"]

SCOPE = "ponder.serve.accepted"


class AcceptedRequest:
    """A run's request as the server accepted it."""

    def __init__(self, prompt: str, history: list[Message], turn: Turn | None = None) -> None:
        self.prompt = prompt
        self.history = history
        self.turn = turn or Turn()


async def remember(
    store: Store, run_id: str, prompt: str, history: Sequence[Message], turn: Turn | None = None
) -> None:
    """Keep the request of a run the server accepts (`StoreError` if the store cannot)."""
    value: dict[str, Any] = {"prompt": prompt, "history": messages_to_json(history)}
    if turn is not None and turn.session_id is not None:
        value["session_id"] = turn.session_id
    if turn is not None and turn.limits is not None:
        value["limits"] = turn.limits.model_dump(exclude_none=True)
    await store.set_secret(SCOPE, run_id, value)


async def recall(store: Store, run_id: str) -> AcceptedRequest | None:
    """The request a server accepted for ``run_id``; None if no server accepted it here."""
    try:
        found: dict[str, Any] | None = await store.get_secret(SCOPE, run_id)
    except StoreError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("prompt"), str):
        return None
    try:
        history = messages_from_json(found.get("history") or [])
    except ValueError:  # a damaged entry: the prompt alone still starts the run over
        history = []
    return AcceptedRequest(found["prompt"], history, _turn(found))


def _turn(found: dict[str, Any]) -> Turn:
    """The session and limits of an accepted request; a damaged part is left out."""
    session = found.get("session_id")
    try:
        limits = UsageLimits(**found["limits"]) if isinstance(found.get("limits"), dict) else None
    except UserError:
        limits = None
    return Turn(session if isinstance(session, str) else None, limits)


async def start_accepted(
    launcher: RunLauncher, prompt: str, history: Sequence[Message], turn: Turn | None = None
) -> RunRecord:
    """Start a run and return once it is stored: its request kept, its row written.

    Without a store (or with one in memory) the run simply starts. `StoreError` (nothing
    started) when the store cannot keep the request; `UserError` for a ``turn`` the
    launcher cannot run (a session without a store).
    """
    store = launcher.store
    if store is None or isinstance(store, MemoryStore):  # gone with the process anyway
        return launcher.start(prompt, history, turn=turn)
    run_id = uuid.uuid4().hex
    await remember(store, run_id, prompt, history, turn)
    record = launcher.start(prompt, history, run_id=run_id, turn=turn)
    while not record.events and not record.is_done:  # run_started: the lease row exists
        await launcher.registry.wait(run_id, 0, 1.0)
    return record


async def start_over(launcher: RunLauncher, run_id: str) -> RunRecord | None:
    """Start a run that stopped before its first checkpoint over from its accepted request.

    None when it has a checkpoint (resume it instead), or no server accepted it here.
    """
    store = launcher.store
    if store is None or launcher.is_active(run_id):
        return None
    try:
        stored = await store.load(run_id)
    except StoreError:
        return None
    request = await recall(store, run_id)
    if stored.has_checkpoint or request is None or stored.record.status == "cancelled":
        return None
    return launcher.start(request.prompt, request.history, run_id=run_id, turn=request.turn)
