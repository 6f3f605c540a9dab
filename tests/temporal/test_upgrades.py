"""Histories written by earlier releases of ponder replay on this one (see record_histories)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from ponder.temporal import PonderWorkflow, build_replayer
from tests.temporal.record_histories import HISTORIES

KEPT = sorted(HISTORIES.glob("*.json"))


def load(path: Path) -> WorkflowHistory:
    data = json.loads(path.read_text())
    return WorkflowHistory.from_json(data["workflow_id"], data["history"])


def test_histories_are_kept_for_every_case() -> None:
    names = {p.name.rsplit("-", 1)[0] for p in KEPT}
    assert {"tools", "approved", "cancelled-in-tool", "cancelled-waiting"} <= names


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
async def test_a_kept_history_replays(path: Path) -> None:
    replayed = await build_replayer().replay_workflow(load(path), raise_on_replay_failure=False)
    assert replayed.replay_failure is None, f"{path.name}: {replayed.replay_failure}"


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
async def test_a_replayer_built_the_ordinary_way_replays_too(path: Path) -> None:
    plain = Replayer(workflows=[PonderWorkflow])
    replayed = await plain.replay_workflow(load(path), raise_on_replay_failure=False)
    assert replayed.replay_failure is None, f"{path.name}: {replayed.replay_failure}"
