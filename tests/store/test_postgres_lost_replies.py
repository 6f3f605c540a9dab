"""A commit whose reply is lost: the retried write recognises its own work, no false conflict."""

from __future__ import annotations

import uuid

import pytest

from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import Checkpoint
from ponder.store.pg_prepared import NAMES
from ponder.store.pg_statements import APPEND, INSERT_EFFECT
from ponder.store.postgres import PostgresStore
from ponder.tools import tool

from .conftest import header, written_run
from .pg_proxy import LossyProxy

pytestmark = pytest.mark.postgres

OWNER = "this-host:1:cafe"
CHECKPOINT = NAMES[APPEND]
"""The checkpoint statement's name, on the wire in every checkpoint (prepared at connect)."""
EFFECT = NAMES[INSERT_EFFECT]


def message(text: str) -> dict[str, str]:
    return {"kind": "user", "content": text}


async def test_a_checkpoint_whose_commit_reply_is_lost_is_not_a_conflict(
    proxied: tuple[PostgresStore, LossyProxy],
) -> None:
    store, proxy = proxied
    run_id = f"lost-{uuid.uuid4().hex}"
    await store.acquire(run_id, OWNER, 60.0)
    await store.write(Checkpoint(run_id, "running", header(1), 0, [message("a")], owner=OWNER))
    proxy.drop_reply_to(CHECKPOINT)
    second = Checkpoint(run_id, "running", header(2), 1, [message("b")], owner=OWNER)
    await store.write(second)
    assert proxy.dropped == 1
    stored = await store.load(run_id)
    assert [m["content"] for m in stored.messages] == ["a", "b"]
    assert stored.record.lease_owner == OWNER and stored.record.messages == 2
    await store.close()


async def test_a_tool_result_whose_lazy_commit_reply_is_lost_is_kept_once(
    proxied: tuple[PostgresStore, LossyProxy],
) -> None:
    """The retry on a new connection finds the committed row; the result is kept once."""
    store, proxy = proxied
    run_id = await written_run(store, "lost")
    proxy.drop_reply_to(EFFECT)
    await store.write_effect(run_id, "c1", {"content": "first"})
    assert proxy.dropped == 1
    await store.write_effect(run_id, "c1", {"content": "again"})  # a resumed run's retry
    assert (await store.load(run_id)).effects == {"c1": {"content": "first"}}
    found = await store._fetch("SELECT current_setting('synchronous_commit')", ())
    assert found == [("on",)]  # the new connection's session is the server's
    await store.close()


async def test_a_lease_whose_reply_is_lost_is_still_this_processs(
    proxied: tuple[PostgresStore, LossyProxy],
) -> None:
    store, proxy = proxied
    run_id = f"lost-{uuid.uuid4().hex}"
    await store.list_runs()  # the schema exists: the next statement is the lease
    proxy.drop_reply_to(b"lease_owner, lease_until)")
    await store.acquire(run_id, OWNER, 60.0)
    assert proxy.dropped == 1
    assert (await store.load(run_id)).record.lease_owner == OWNER
    await store.close()


async def test_a_run_goes_on_after_a_lost_commit_reply(
    proxied: tuple[PostgresStore, LossyProxy],
) -> None:
    store, proxy = proxied

    @tool
    def lose_next_commit() -> str:
        """Lose the reply to the next checkpoint (the network, from the run's view)."""
        proxy.drop_reply_to(CHECKPOINT)
        return "armed"

    model = ScriptedModel(
        [
            call_tools(("lose_next_commit", {})),
            call_tools(("agent_stop", {"result": "ok"})),
            reply("done despite the lost reply"),
        ]
    )
    agent = Agent(
        model,
        tools=[lose_next_commit],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )
    result = await agent.run("lose a reply")
    assert result.status == "completed" and result.output == "done despite the lost reply"
    assert proxy.dropped == 1
    stored = await store.load(result.run_id)
    assert stored.record.status == "completed" and stored.record.lease_owner is None
    assert len(stored.ledger_messages()) == len(result.messages)
    await store.close()
