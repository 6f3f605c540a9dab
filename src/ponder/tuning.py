"""Opt-in, process-wide tuning for a process that runs many agent runs at once.

ponder never changes interpreter settings by itself. A server running thousands of
concurrent runs may call `tune_gc` once at startup, after its imports: every run waiting on
its model keeps its objects alive, and with the default thresholds the cyclic collector
traverses all of them again in each full collection.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from ponder.exceptions import UserError

__all__ = ["DEFAULT_MIDDLE", "DEFAULT_THRESHOLD", "GcSettings", "restore_gc", "tune_gc"]

DEFAULT_THRESHOLD = 100_000
"""Allocations between young-generation collections after `tune_gc` (CPython's is 700)."""
DEFAULT_MIDDLE = 100
"""Young collections between middle-generation collections after `tune_gc` (CPython's is 10).

A run's objects that outlive one young collection (those alive across a model wait) wait
in the middle generation; the longer it goes uncollected, the more of them belong to runs
that have ended by then and are freed without ever being traversed. In the scale bench
(50,000 concurrent runs), a pass made 8 middle collections with 50,000 and 10, and none
with 100,000 and 100; the collector's CPU fell from 5.2–6.1 s to 2.8–3.4 s."""


@dataclass(frozen=True, slots=True)
class GcSettings:
    """What `tune_gc` replaced, for `restore_gc`."""

    thresholds: tuple[int, int, int]
    frozen: bool


def tune_gc(
    *, threshold: int = DEFAULT_THRESHOLD, middle: int = DEFAULT_MIDDLE, freeze: bool = True
) -> GcSettings:
    """Make cyclic-GC collections rarer for the whole process; returns the old settings.

    ``threshold`` and ``middle`` become the young and the middle generation's thresholds
    (``gc.set_threshold``; the oldest generation's stays); with ``freeze`` the objects alive
    now (modules, classes, schemas) move to the permanent generation (``gc.freeze``) and
    are never traversed again. Garbage in reference cycles is still collected, just later,
    so the process may hold more memory between collections, and a middle collection,
    when it comes, takes longer. Process-wide: call it from the application, not from a
    library.
    """
    if threshold < 1 or middle < 1:
        raise UserError("tune_gc: threshold and middle must be at least 1")
    old = GcSettings(gc.get_threshold(), freeze)
    if freeze:
        gc.freeze()
    gc.set_threshold(threshold, middle, old.thresholds[2])
    return old


def restore_gc(settings: GcSettings) -> None:
    """Undo `tune_gc`: the old thresholds, and the frozen objects back in the oldest generation."""
    gc.set_threshold(*settings.thresholds)
    if settings.frozen:
        gc.unfreeze()
