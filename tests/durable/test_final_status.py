"""A failed run whose last checkpoint cannot be written still leaves the store as failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ponder.agent import Agent
from ponder.exceptions import ModelResponseError, StoreError
from ponder.models import ModelRequest, ModelResponse, ScriptedModel
from ponder.store import Checkpoint, SQLiteStore


class FullOnFailure(SQLiteStore):
    """A store whose disk fills up just as the run's failure is written."""

    async def write(self, checkpoint: Checkpoint) -> int:
        if checkpoint.status == "failed":
            raise StoreError(f"cannot write run {checkpoint.run_id!r}: database or disk is full")
        return await super().write(checkpoint)


def broken(request: ModelRequest) -> ModelResponse:
    raise ModelResponseError("the provider sent a response ponder cannot read")


async def test_the_failed_status_is_set_when_the_checkpoint_cannot_be(tmp_path: Path) -> None:
    store = FullOnFailure(tmp_path / "runs.sqlite3")
    agent = Agent(ScriptedModel(broken), agent_thought_mode="chat", store=store)
    with pytest.raises(StoreError, match="disk is full"):
        await agent.run("anything", run_id="full-disk")
    record = (await store.list_runs())[0]
    assert (record.run_id, record.status, record.lease_owner) == ("full-disk", "failed", None)
