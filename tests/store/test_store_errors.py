"""Stores that hold bad data or cannot be written fail with `StoreError`, never a raw error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import StoreError
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import FORMAT, SQLiteStore, Store
from ponder.tools import tool
from tests.cli.test_commands import one_line_error, ponder

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@tool(requires_approval=True)
async def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where.
    """
    return f"deployed to {target}"


@tool
async def look(item: str) -> str:
    """Look at something.

    Args:
        item: What.
    """
    return f"{item} looks fine"


def approval_agent(store: Store) -> Agent:
    def script(request: Any) -> Any:
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        if done == 0:
            return call_tools(
                ("look", {"item": "prod"}, "l1"), ("deploy", {"target": "prod"}, "d1")
            )
        if done == 2:
            return call_tools(("agent_stop", {"result": "deployed"}, "s1"))
        return reply("deployed")

    return Agent(
        ScriptedModel(script),
        tools=[deploy, look],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )


def execute(store: Store, statement: str, *args: Any) -> None:
    """Change the stored rows behind ponder's back (``?`` placeholders)."""
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.path) as db:
            db.execute(statement, args)
        return
    import psycopg

    dsn = getattr(store, "dsn", None)
    if dsn is None:
        pytest.skip("the memory store has no rows to damage")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statement.replace("?", "%s"), args)


WRONG_SHAPES = {
    "message": (
        "UPDATE ponder_messages SET body = ? WHERE run_id = ? AND idx = 1",
        '{"kind":"tool"}',
    ),
    "message-list": ("UPDATE ponder_messages SET body = ? WHERE run_id = ? AND idx = 0", "[1, 2]"),
    "header": (
        "UPDATE ponder_runs SET header = ? WHERE run_id = ?",
        json.dumps({"format": FORMAT}),
    ),
    "ledger-info": (
        "UPDATE ponder_runs SET header = ? WHERE run_id = ?",
        json.dumps({"format": FORMAT, "vm": {}, "ledger": {"generation": "x"}}),
    ),
    "effect": ("UPDATE ponder_effects SET body = ? WHERE run_id = ?", '{"unexpected": 1}'),
}


@pytest.mark.parametrize("damage", sorted(WRONG_SHAPES))
async def test_valid_json_of_the_wrong_shape_is_a_store_error(store: Store, damage: str) -> None:
    agent = approval_agent(store)
    suspended = await agent.run("ship it")
    assert suspended.status == "suspended"
    statement, body = WRONG_SHAPES[damage]
    execute(store, statement, body, suspended.run_id)
    with pytest.raises(StoreError, match=r"wrong shape|no VM snapshot"):
        await agent.resume(suspended.run_id, "approve")


async def test_a_run_row_of_the_wrong_shape_is_listed_and_its_load_says_why(
    store: Store,
) -> None:
    """One damaged row neither hides the other runs nor breaks listing with a raw error."""
    if not isinstance(store, SQLiteStore):
        pytest.skip("only SQLite lets a column hold a value of another type")
    agent = approval_agent(store)
    suspended, other = await agent.run("ship it"), await agent.run("ship that")
    execute(store, "UPDATE ponder_runs SET messages = ? WHERE run_id = ?", "many", suspended.run_id)
    listed = {r.run_id: r for r in await store.list_runs()}
    assert set(listed) == {suspended.run_id, other.run_id}
    assert listed[suspended.run_id].messages == 0  # unreadable: read as nothing
    with pytest.raises(StoreError, match="wrong shape"):
        await store.load(suspended.run_id)


def make_run(tmp_path: Path) -> tuple[Path, str]:
    """A store file holding one suspended run."""
    import asyncio

    path = tmp_path / "runs.sqlite3"
    store = SQLiteStore(path)
    result = asyncio.run(approval_agent(store).run("ship it"))
    asyncio.run(store.close())
    return path, result.run_id


def test_a_damaged_file_is_a_store_error_in_the_cli(tmp_path: Path) -> None:
    path, run_id = make_run(tmp_path)
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xde\xad\xbe\xef" * ((len(data) - 4096) // 4)
    path.write_bytes(bytes(data))
    for args in (["runs", "list"], ["runs", "show", run_id]):
        line = one_line_error(ponder(*args, "--store", f"sqlite:///{path}"))
        assert "damaged" in line and "bug in ponder" not in line, line


def test_a_read_only_file_can_be_listed_and_shown_but_not_written(tmp_path: Path) -> None:
    path, run_id = make_run(tmp_path)
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available to make the file read-only")
    try:
        url = f"sqlite:///{path}"
        listed = ponder("runs", "list", "--store", url, "--json")
        assert listed.returncode == 0, listed.stderr
        assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == [run_id]
        shown = ponder("runs", "show", run_id, "--store", url, "--json")
        assert shown.returncode == 0 and json.loads(shown.stdout)["status"] == "suspended"
        cancelled = ponder("runs", "cancel", run_id, "--store", url)
        line = one_line_error(cancelled)
        assert "read-only" in line and "bug in ponder" not in line, line
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


FULL_DISK = """
import asyncio, resource, sys
from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import SQLiteStore
from ponder.tools import tool

@tool
def big() -> str:
    '''Return a lot of text.'''
    return "x" * 4_000_000

async def main():
    store = SQLiteStore(sys.argv[1])
    agent = Agent(ScriptedModel([call_tools(("big", {})), reply("done")]), tools=[big],
                  agent_thought_mode="chat", enable_thinking_tool=False, store=store)
    size = 2_000_000
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    try:
        await agent.run("fill the disk")
    except Exception as error:
        print(type(error).__name__, error)

asyncio.run(main())
"""


def test_a_full_disk_is_a_store_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path / "runs.sqlite3")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("StoreError"), proc.stdout + proc.stderr[-2000:]
    assert "disk is full" in proc.stdout
