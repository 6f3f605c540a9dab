"""PostgreSQL connections that drop or never answer: the store recovers or fails typed."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import pytest

from ponder.agent import Agent
from ponder.exceptions import StoreError
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import FORMAT, Checkpoint
from ponder.store.postgres import PostgresStore
from ponder.tools import tool

from .conftest import PG_DSN, drop_schema, isolated_schema, postgres_available

pytestmark = pytest.mark.postgres


@pytest.fixture
def named_store() -> Iterator[tuple[PostgresStore, str]]:
    """A store in a schema of its own whose connections carry a unique application name."""
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema, name = isolated_schema(), f"ponder-{uuid.uuid4().hex[:10]}"
    yield PostgresStore(f"{PG_DSN}?options=-csearch_path%3D{schema}&application_name={name}"), name
    drop_schema(schema)


def terminate(name: str) -> int:
    """``pg_terminate_backend`` every connection of the store; how many there were."""
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (name,),
        ).fetchall()
    return len(rows)


def header() -> dict[str, object]:
    return {"format": FORMAT, "vm": {"pc": 0}, "ledger": {"length": 0, "generation": 0}}


async def test_dropped_connections_are_replaced_and_the_operation_retried(
    named_store: tuple[PostgresStore, str],
) -> None:
    store, name = named_store
    run_id = f"drop-{uuid.uuid4().hex}"
    await store.write(Checkpoint(run_id, "running", header(), 0, [], prompt="task"))
    assert terminate(name) >= 1
    assert (await store.load(run_id)).record.prompt == "task"
    assert terminate(name) >= 1
    await store.write(
        Checkpoint(run_id, "running", header(), 0, [{"kind": "user", "content": "hi"}])
    )
    assert terminate(name) >= 1
    await store.set_status(run_id, "suspended")
    stored = await store.load(run_id)
    assert stored.record.status == "suspended" and len(stored.messages) == 1
    await store.close()


@tool
def note(text: str) -> str:
    """Note something.

    Args:
        text: What.
    """
    return f"noted {text}"


async def test_a_run_survives_its_connections_being_killed_between_rounds(
    named_store: tuple[PostgresStore, str],
) -> None:
    store, name = named_store

    @tool
    def kill_connections() -> str:
        """Drop every connection of the store (a database restart, from the run's view)."""
        return f"terminated {terminate(name)}"

    model = ScriptedModel(
        [
            call_tools(("note", {"text": "a"})),
            call_tools(("kill_connections", {})),
            call_tools(("note", {"text": "b"})),
            call_tools(("agent_stop", {"result": "ok"})),
            reply("done after the restart"),
        ]
    )
    agent = Agent(
        model,
        tools=[note, kill_connections],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )
    result = await agent.run("note things")
    assert result.status == "completed" and result.output == "done after the restart"
    stored = await store.load(result.run_id)
    assert stored.record.status == "completed" and stored.record.lease_owner is None
    await store.close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


async def test_a_server_that_never_answers_is_a_store_error_not_a_hang(silent_port: int) -> None:
    store = PostgresStore(f"postgresql://x@127.0.0.1:{silent_port}/db", connect_timeout=1.0)
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store"):
        await store.list_runs()
