"""`Checkpointer`: writes one run to a store at every durable boundary, incrementally.

Boundaries: after every VM node (the interpreter's ``after`` hook), after every model
response that calls tools (before any of them runs), and after every tool call (its
result, as an effect row). A checkpoint writes a small header — the VM snapshot with
the `RunState` minus its ledger — and only the messages added since the last one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ponder.events import CheckpointWritten
from ponder.messages import Ledger, ToolMessage, messages_from_json
from ponder.store.base import FORMAT, Checkpoint, Store, StoredRun
from ponder.tools.executor import ToolOutcome

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext
    from ponder.vm import Interpreter

__all__ = ["Checkpointer"]


class Checkpointer:
    """The link between one run and its store."""

    def __init__(self, store: Store, run: RunContext) -> None:
        self.store = store
        self.run = run
        self.vm: Interpreter | None = None
        self.effects: dict[str, ToolMessage] = {}
        self.bytes_written = 0
        self.checkpoints = 0
        self._written = 0
        self._generation = -1

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
        state = self.run.state
        ledger = state.ledger
        rewrite = ledger.generation != self._generation
        first = 0 if rewrite else self._written
        header = {
            "format": FORMAT,
            "vm": self.vm.snapshot(),
            "ledger": {"length": len(ledger), "generation": ledger.generation},
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
        )
        size = await self.store.write(checkpoint)
        self._written, self._generation = len(ledger), ledger.generation
        self.bytes_written += size
        self.checkpoints += 1
        self.run.emit_now(CheckpointWritten(pc=self.vm.pc, bytes_written=size))
        return size

    async def record(self, outcome: ToolOutcome) -> None:
        """Save a finished call's result before anything else can happen to it."""
        if outcome.status != "cancelled":
            await self.save(outcome.message)

    async def save(self, message: ToolMessage) -> None:
        """Save one call's answer as an effect: a resumed run uses it instead of redoing it."""
        self.effects[message.call_id] = message
        self.bytes_written += await self.store.write_effect(
            self.run.state.run_id, message.call_id, message.model_dump(mode="json")
        )

    def forget(self, call_ids: Iterable[str]) -> None:
        """Drop saved results once they are in the ledger (ids may be reused later)."""
        for call_id in call_ids:
            self.effects.pop(call_id, None)

    def load(self, stored: StoredRun) -> tuple[dict[str, Any], Ledger]:
        """The VM snapshot and the ledger of a stored run; remembers what is stored."""
        ledger = Ledger(messages_from_json(stored.messages))
        info = stored.header.get("ledger", {})
        ledger.generation = int(info.get("generation", 0))
        self._written, self._generation = len(ledger), ledger.generation
        open_calls = ledger.open_calls
        for call_id, body in stored.effects.items():
            if call_id in open_calls:  # results already in the ledger are history
                self.effects[call_id] = ToolMessage.model_validate(body)
        vm_snapshot: dict[str, Any] = stored.header["vm"]
        return vm_snapshot, ledger
