"""`tune_gc` changes the collector only when asked, and `restore_gc` undoes it."""

from __future__ import annotations

import gc

import pytest

from ponder.exceptions import UserError
from ponder.tuning import restore_gc, tune_gc


def test_importing_ponder_leaves_the_collector_as_it_was() -> None:
    import ponder.agent  # noqa: F401

    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold()[0] == 700


def test_tune_gc_raises_the_threshold_and_freezes_until_restored() -> None:
    before = gc.get_threshold()
    old = tune_gc(threshold=10_000)
    try:
        assert gc.get_threshold() == (10_000, *before[1:])
        assert gc.get_freeze_count() > 0
    finally:
        restore_gc(old)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_tune_gc_without_freezing_leaves_objects_where_they_are() -> None:
    old = tune_gc(freeze=False)
    try:
        assert gc.get_freeze_count() == 0
    finally:
        restore_gc(old)


def test_a_threshold_below_one_is_refused() -> None:
    with pytest.raises(UserError, match="at least 1"):
        tune_gc(threshold=0)
