"""`tune_gc` changes the collector only when asked, and `restore_gc` undoes it."""

from __future__ import annotations

import gc

import pytest

from ponder.exceptions import UserError
from ponder.tuning import DEFAULT_MIDDLE, DEFAULT_THRESHOLD, restore_gc, tune_gc


def test_importing_ponder_leaves_the_collector_as_it_was() -> None:
    import ponder.agent  # noqa: F401

    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold()[0] == 700


def test_tune_gc_raises_the_thresholds_and_freezes_until_restored() -> None:
    before = gc.get_threshold()
    old = tune_gc(threshold=10_000, middle=20)
    try:
        assert gc.get_threshold() == (10_000, 20, before[2])
        assert gc.get_freeze_count() > 0
    finally:
        restore_gc(old)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_tune_gc_defaults_make_both_younger_generations_rarer() -> None:
    before = gc.get_threshold()
    old = tune_gc(freeze=False)
    try:
        assert gc.get_threshold() == (DEFAULT_THRESHOLD, DEFAULT_MIDDLE, before[2])
        assert DEFAULT_THRESHOLD > before[0] and DEFAULT_MIDDLE > before[1]
    finally:
        restore_gc(old)
    assert gc.get_threshold() == before


def test_tune_gc_without_freezing_leaves_objects_where_they_are() -> None:
    old = tune_gc(freeze=False)
    try:
        assert gc.get_freeze_count() == 0
    finally:
        restore_gc(old)


@pytest.mark.parametrize(("threshold", "middle"), [(0, 100), (1_000, 0), (1_000, -5)])
def test_a_threshold_below_one_is_refused(threshold: int, middle: int) -> None:
    before = gc.get_threshold()
    with pytest.raises(UserError, match="at least 1"):
        tune_gc(threshold=threshold, middle=middle)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
