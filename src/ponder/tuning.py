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

__all__ = ["GcSettings", "restore_gc", "tune_gc"]

DEFAULT_THRESHOLD = 50_000
"""Allocations between young-generation collections after `tune_gc` (CPython's is 700)."""


@dataclass(frozen=True, slots=True)
class GcSettings:
    """What `tune_gc` replaced, for `restore_gc`."""

    thresholds: tuple[int, int, int]
    frozen: bool


def tune_gc(*, threshold: int = DEFAULT_THRESHOLD, freeze: bool = True) -> GcSettings:
    """Make cyclic-GC collections rarer for the whole process; returns the old settings.

    ``threshold`` becomes the young generation's threshold (``gc.set_threshold``); with
    ``freeze`` the objects alive now (modules, classes, schemas) move to the permanent
    generation (``gc.freeze``) and are never traversed again. Garbage in reference cycles
    is still collected, just later, so the process may hold more memory between
    collections. Process-wide: call it from the application, not from a library.
    """
    if threshold < 1:
        raise UserError("tune_gc: threshold must be at least 1")
    old = GcSettings(gc.get_threshold(), freeze)
    if freeze:
        gc.freeze()
    _, middle, oldest = old.thresholds
    gc.set_threshold(threshold, middle, oldest)
    return old


def restore_gc(settings: GcSettings) -> None:
    """Undo `tune_gc`: the old thresholds, and the frozen objects back in the oldest generation."""
    gc.set_threshold(*settings.thresholds)
    if settings.frozen:
        gc.unfreeze()
