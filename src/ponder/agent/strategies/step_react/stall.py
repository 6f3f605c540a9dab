"""Stall detection inside a step: the same call, with the same result, again and again.

A signature is the call's name and canonical arguments (`call_signature`) plus a digest
of its result, so a call that keeps returning something new is progress, not a stall.
Built-in calls are not counted. The first time a signature is seen
``loop_reasoning_trigger`` times the step gets a correction; if any signature reaches the
threshold again after that, the stall persists and the configured action applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Literal

from ponder.agent.run.plan_state import StepRunState
from ponder.agent.strategies.acting import call_signature
from ponder.messages import Message, ToolCallPart, ToolMessage

__all__ = ["Stall", "display_signature", "record_round", "round_signatures"]

_SEPARATOR = " => #"


@dataclass(frozen=True, slots=True)
class Stall:
    """A stall found in the current step: correct it first, then act if it persists."""

    stage: Literal["corrected", "persisted"]
    signature: str
    repeats: int


def round_signatures(
    messages: Sequence[Message], calls: Sequence[ToolCallPart], skip: Container[str]
) -> list[str]:
    """Signatures of this round's calls, read with their results from the ledger's tail."""
    tail = messages[len(messages) - len(calls) :] if calls else ()
    results = {m.call_id: m.content for m in tail if isinstance(m, ToolMessage)}
    found = []
    for call in calls:
        if call.name in skip:
            continue
        digest = hashlib.sha256(results.get(call.id, "").encode("utf-8")).hexdigest()[:12]
        found.append(f"{call_signature(call)}{_SEPARATOR}{digest}")
    return found


def display_signature(signature: str) -> str:
    """The call part of a signature, for events and prompts."""
    return signature.split(_SEPARATOR, 1)[0]


def record_round(step: StepRunState, signatures: Sequence[str], trigger: int) -> Stall | None:
    """Count this round's signatures in ``step``; report a stall at the threshold."""
    worst = ""
    counts = dict(step.signatures)
    for signature in signatures:
        counts[signature] = counts.get(signature, 0) + 1
        if counts[signature] >= trigger and (not worst or counts[signature] > counts[worst]):
            worst = signature
    step.signatures = tuple(counts.items())
    if not worst:
        return None
    repeats = counts[worst]
    if not step.stall_signature:
        step.stall_signature = worst
        return Stall("corrected", worst, repeats)
    return Stall("persisted", worst, repeats)
