"""`Checkpointer`: writes one run to a store at every durable boundary, incrementally.

Boundaries: after every VM node (the interpreter's ``after`` hook), after every model
response that calls tools (before any of them runs), and after every tool call (its
result, as an effect row). A checkpoint writes a small header — the VM snapshot with
the `RunState` minus its ledger — and only the messages added since the last one.

An effect is keyed by where its call lives — the ledger generation, the index of the
assistant message, and the call id (unique within that message) — so a provider that
reuses ids across rounds never gets one round's result for another round's call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ponder.events import CheckpointWritten, Event, event_to_dict
from ponder.exceptions import LedgerError, StoreError
from ponder.messages import Ledger, ToolMessage
from ponder.store.base import FORMAT, Checkpoint, Store, StoredRun
from ponder.tools.executor import ToolOutcome

if TYPE_CHECKING:
    from ponder.agent.run.bus import EventBus
    from ponder.agent.run.state import RunState
    from ponder.vm import Interpreter

__all__ = ["Checkpointer", "Loaded", "effect_key", "load_checkpoint"]

_MERGED = frozenset({"text_delta", "reasoning_delta"})
POSITION_KEYS = "position"
"""The header's ``ledger.keys`` value for effects keyed by `effect_key` (else: bare ids)."""


def effect_key(generation: int, index: int, call_id: str) -> str:
    """The store key of a call's result: ``<generation>.<message index>:<call id>``."""
    return f"{generation}.{index}:{call_id}"


class Checkpointer:
    """The link between one run and its store."""

    def __init__(self, store: Store, state: RunState, bus: EventBus) -> None:
        self.store = store
        self.state = state
        self.bus = bus
        self.vm: Interpreter | None = None
        self.owner: str | None = None
        """The lease holder; checkpoints are written only while it holds the run."""
        self.effects: dict[str, ToolMessage] = {}
        """Saved results of the open assistant message's calls, by call id."""
        self._effects_at: tuple[int, int] | None = None
        self._written = 0
        self._has_effects = False
        """True while effect rows exist that the stored messages do not hold yet."""
        self._generation: int | None = None
        """The generation last written; None before the first write of a fresh run."""
        self._events: list[dict[str, Any]] = []
        """Events since the last checkpoint, for the store's event log."""

    def note(self, event: Event) -> None:
        """Keep an event for the store's log; a run of text deltas is kept as one event."""
        found = event_to_dict(event)
        last = self._events[-1] if self._events else None
        if last is not None and found["kind"] in _MERGED and last["kind"] == found["kind"]:
            last.update(found, text=last["text"] + found["text"])
            return
        self._events.append(found)

    def take_events(self) -> list[dict[str, Any]]:
        """The kept events (the store encodes each once); the checkpointer forgets them."""
        events, self._events = self._events, []
        return events

    async def flush_events(self) -> None:
        """Write the events no checkpoint took (those after the run's last one)."""
        events = self.take_events()
        if events:
            await self.store.append_events(self.state.run_id, events)

    async def after_node(self, vm: Interpreter, pc: int) -> None:
        """The interpreter's ``after`` hook: checkpoint after nodes marked ``durable``.

        Other boundaries need none: a node interrupted mid-way is re-entered, and what it
        already did is in the ledger, the effects or the last checkpoint.
        """
        found = vm.program.node_at(pc)
        if found is not None and found.durable:
            await self.checkpoint()

    async def checkpoint(self, status: str | None = None) -> int:
        """Write the header and the messages added since the last checkpoint."""
        assert self.vm is not None
        state = self.state
        ledger = state.ledger
        # a fresh run's first write appends, so a used run id conflicts instead of rewriting
        rewrite = self._generation is not None and ledger.generation != self._generation
        first = 0 if rewrite else self._written
        header = {
            "format": FORMAT,
            "vm": self.vm.snapshot(),
            "ledger": {
                "length": len(ledger),
                "generation": ledger.generation,
                "keys": POSITION_KEYS,
            },
        }
        checkpoint = Checkpoint(
            run_id=state.run_id,
            status=status or state.status,
            header=header,
            first_index=first,
            messages=[m.model_dump(mode="json") for m in ledger.messages[first:]],
            rewrite=rewrite,
            prompt=state.prompt,
            session_id=state.session_id,
            owner=self.owner,
            drop_effects=self._has_effects and not ledger.open_calls,
            events=self.take_events(),
        )
        size = await self.store.write(checkpoint)
        self._written, self._generation = len(ledger), ledger.generation
        self._has_effects = self._has_effects and not checkpoint.drop_effects
        self.bus.emit_now(CheckpointWritten(pc=self.vm.pc, bytes_written=size))
        return size

    async def record(self, outcome: ToolOutcome) -> None:
        """Save a finished call's result before anything else can happen to it."""
        if outcome.status != "cancelled":
            await self.save(outcome.message)

    async def save(self, message: ToolMessage) -> None:
        """Save one call's answer as an effect: a resumed run uses it instead of redoing it."""
        generation, index = self._position()
        self._current_effects()[message.call_id] = message
        key = effect_key(generation, index, message.call_id)
        self._has_effects = True
        await self.store.write_effect(self.state.run_id, key, message.model_dump(mode="json"))

    def saved(self, call_id: str) -> ToolMessage | None:
        """The saved result of the open assistant message's call ``call_id``, if any."""
        return self._current_effects().get(call_id)

    def forget(self, call_ids: Iterable[str]) -> None:
        """Drop saved results once they are in the ledger."""
        for call_id in call_ids:
            self.effects.pop(call_id, None)

    def _position(self) -> tuple[int, int]:
        ledger = self.state.ledger
        return ledger.generation, ledger.assistant_index

    def _current_effects(self) -> dict[str, ToolMessage]:
        """``effects``, emptied first if they belong to an earlier assistant message."""
        position = self._position()
        if self._effects_at != position:
            self.effects.clear()
            self._effects_at = position
        return self.effects

    def continue_from(self, loaded: Loaded) -> None:
        """Go on from a stored run: what it stored is not written again."""
        self._written, self._generation = loaded.length, loaded.ledger.generation
        self.effects = dict(loaded.effects)
        self._effects_at = (loaded.ledger.generation, loaded.ledger.assistant_index)
        self._has_effects = loaded.has_effects


@dataclass(frozen=True, slots=True)
class Loaded:
    """A stored run read back: its VM snapshot, its ledger and its open calls' results."""

    snapshot: dict[str, Any]
    ledger: Ledger
    effects: dict[str, ToolMessage]
    has_effects: bool
    length: int


def load_checkpoint(stored: StoredRun) -> Loaded:
    """The VM snapshot, the ledger and the open calls' saved results of a stored run.

    ``StoreError`` if what is stored has the wrong shape (valid JSON, wrong fields).
    """
    view = stored.view
    try:
        ledger = Ledger(stored.ledger_messages())
        ledger.generation = view.ledger_generation
        effects = _open_effects(stored, ledger, view.ledger_keys == POSITION_KEYS)
    except (LedgerError, ValidationError, TypeError, ValueError, AttributeError) as exc:
        raise StoreError(
            f"run {stored.record.run_id!r}: what is stored has the wrong shape "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:300]})"
        ) from None
    return Loaded(stored.vm_snapshot(), ledger, effects, bool(stored.effects), len(ledger))


def _open_effects(stored: StoredRun, ledger: Ledger, by_position: bool) -> dict[str, ToolMessage]:
    """The stored results of the open calls; a run stored before position keys uses ids."""
    open_calls = ledger.open_calls
    prefix = effect_key(ledger.generation, ledger.assistant_index, "") if by_position else ""
    found: dict[str, ToolMessage] = {}
    for key, body in stored.effects.items():
        call_id = key.removeprefix(prefix)
        if key.startswith(prefix) and call_id in open_calls:  # answered ones are history
            found[call_id] = ToolMessage.model_validate(body)
    return found
