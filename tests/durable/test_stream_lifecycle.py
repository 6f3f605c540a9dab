"""A stream owns its run: leaving it early stops the run as ``cancelled``, stored so, with
its lease given back at once, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from ponder.agent import Agent
from ponder.events import Event
from ponder.exceptions import UserError
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import SQLiteStore, Store
from ponder.store.postgres import PostgresStore
from ponder.tools import tool
from tests.store.conftest import PG_DSN, drop_schema, isolated_schema, postgres_available

ELSEWHERE = "another-host:1:feedbeef"

Opener = Callable[[], Store]


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the same durable store again and again, as separate processes would."""
    if request.param == "sqlite":
        path = tmp_path / "runs.sqlite3"
        yield lambda: SQLiteStore(path)
        return
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema = isolated_schema()
    yield lambda: PostgresStore(f"{PG_DSN}?options=-csearch_path%3D{schema}")
    drop_schema(schema)


@pytest.fixture
async def store(opener: Opener) -> AsyncIterator[Store]:
    opened = opener()
    yield opened
    await opened.close()


@tool
async def wait_forever(n: int) -> str:
    """Wait for something that never comes.

    Args:
        n: What to wait for.
    """
    await asyncio.Event().wait()
    return "never"


def script(request: ModelRequest) -> ModelResponse:
    if not any(isinstance(m, ToolMessage) for m in request.messages):
        return call_tools(("wait_forever", {"n": 1}, "c1"))
    return reply("done")


def hanging_agent() -> Agent:
    """An agent whose run waits in a tool call until it is stopped."""
    return Agent(
        ScriptedModel(script),
        tools=[wait_forever],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


def new_id() -> str:
    return f"stream-{uuid.uuid4().hex}"


async def assert_cancelled_and_free(store: Store, run_id: str) -> None:
    """Stored as cancelled, and another process can take the run at once."""
    record = (await store.load(run_id)).record
    assert record.status == "cancelled"
    assert not record.is_held
    await store.acquire(run_id, ELSEWHERE, 60.0)  # raises RunLeaseError if still held
    await store.release(run_id, ELSEWHERE)
    with pytest.raises(UserError, match="was cancelled"):
        await hanging_agent().resume(run_id, store=store)


async def test_break_inside_async_with_stops_the_run_before_the_block_ends(store: Store) -> None:
    run_id = new_id()
    seen: list[str] = []
    async with hanging_agent().stream("wait", store=store, run_id=run_id) as stream:
        async for event in stream:
            seen.append(event.kind)
            if event.kind == "tool_call_started":
                break
    assert seen[0] == "run_started" and seen[-1] == "tool_call_started"
    await assert_cancelled_and_free(store, run_id)
    with pytest.raises(UserError, match="has not finished"):
        _ = stream.result
    with pytest.raises(UserError, match="closed"):
        async for _event in stream:
            pass
    await stream.aclose()  # a second close changes nothing


async def test_an_exception_inside_the_block_stops_the_run(store: Store) -> None:
    run_id = new_id()
    with pytest.raises(ValueError, match="consumer failed"):
        async with hanging_agent().stream("wait", store=store, run_id=run_id) as stream:
            async for event in stream:
                if event.kind == "tool_call_started":
                    raise ValueError("consumer failed")
    await assert_cancelled_and_free(store, run_id)


@pytest.mark.parametrize("with_block", [True, False])
async def test_cancelling_the_consuming_task_stops_the_run(store: Store, with_block: bool) -> None:
    run_id = new_id()
    waiting = asyncio.Event()

    async def consume() -> None:
        stream = hanging_agent().stream("wait", store=store, run_id=run_id)
        if with_block:
            async with stream:
                async for event in stream:
                    if event.kind == "tool_call_started":
                        waiting.set()
        else:
            async for event in stream:
                if event.kind == "tool_call_started":
                    waiting.set()

    consumer = asyncio.create_task(consume())
    await waiting.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    await assert_cancelled_and_free(store, run_id)


async def test_a_second_cancellation_during_cleanup_still_records_the_run(store: Store) -> None:
    run_id = new_id()
    waiting = asyncio.Event()

    async def consume() -> None:
        async with hanging_agent().stream("wait", store=store, run_id=run_id) as stream:
            async for event in stream:
                if event.kind == "tool_call_started":
                    waiting.set()

    consumer = asyncio.create_task(consume())
    await waiting.wait()
    consumer.cancel()
    for _ in range(3):  # let the consumer start stopping the run, then cancel it again
        await asyncio.sleep(0)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    await assert_cancelled_and_free(store, run_id)


async def test_a_plain_async_for_break_is_cleaned_up_before_the_store_closes(
    opener: Opener,
) -> None:
    run_id = new_id()
    store = opener()
    async for event in hanging_agent().stream("wait", store=store, run_id=run_id):
        if event.kind == "tool_call_started":
            break
    await store.close()  # waits for the dropped stream's run to write its end
    reopened = opener()
    try:
        await assert_cancelled_and_free(reopened, run_id)
    finally:
        await reopened.close()


async def test_a_kept_stream_whose_loop_was_left_is_cleaned_up_too(opener: Opener) -> None:
    run_id = new_id()
    store = opener()
    stream = hanging_agent().stream("wait", store=store, run_id=run_id)
    async for event in stream:
        if event.kind == "tool_call_started":
            break
    await store.close()  # nobody can iterate the stream again: its run is stopped
    reopened = opener()
    try:
        await assert_cancelled_and_free(reopened, run_id)
    finally:
        await reopened.close()
    with pytest.raises(UserError, match="only once"):
        async for _event in stream:
            pass


def test_stream_sync_left_early_records_the_run_before_the_loop_returns(
    opener: Opener,
) -> None:
    run_id = new_id()
    store = opener()
    for event in hanging_agent().stream_sync("wait", store=store, run_id=run_id):
        if event.kind == "tool_call_started":
            break

    async def check() -> None:
        reopened = opener()
        try:
            await assert_cancelled_and_free(reopened, run_id)
        finally:
            await reopened.close()

    asyncio.run(check())


PROGRAM = """
import asyncio, sys
from tests.durable.test_stream_lifecycle import hanging_agent
from ponder.store import SQLiteStore

async def main() -> None:
    store = SQLiteStore(sys.argv[1])
    stream = hanging_agent().stream("wait", store=store, run_id=sys.argv[2])
    iterator = aiter(stream)
    sys.modules["__main__"].KEPT = iterator  # kept alive past the loop's end
    while (await anext(iterator)).kind != "tool_call_started":
        pass
    # returns with the run still going: asyncio.run's shutdown must stop and record it

asyncio.run(main())
"""


async def test_a_stream_still_going_when_the_loop_shuts_down_is_recorded(tmp_path: Path) -> None:
    path, run_id = tmp_path / "runs.sqlite3", new_id()
    program = textwrap.dedent(PROGRAM)
    done = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", program, str(path), run_id],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    store = SQLiteStore(path)
    try:
        await assert_cancelled_and_free(store, run_id)
    finally:
        await store.close()


async def test_a_stream_left_while_its_run_is_starting_records_the_run(store: Store) -> None:
    agent = hanging_agent()

    @agent.on_event("run_started", block=True)
    async def slow_start(event: Event) -> None:
        await asyncio.Event().wait()  # the run is still starting when the consumer leaves

    run_id = new_id()
    async with agent.stream("wait", store=store, run_id=run_id) as stream:
        async for event in stream:
            assert event.kind == "run_started"
            break
    await assert_cancelled_and_free(store, run_id)
