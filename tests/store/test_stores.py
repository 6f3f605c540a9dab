"""The same behaviour from every store: memory, SQLite and PostgreSQL."""

from __future__ import annotations

import datetime
import json

import pytest

from ponder.exceptions import RunLeaseError, StoreError
from ponder.store import FORMAT, Checkpoint, Store


def header(pc: int) -> dict[str, object]:
    return {"format": FORMAT, "vm": {"pc": pc}, "ledger": {"length": 0, "generation": 0}}


def message(text: str) -> dict[str, object]:
    return {"kind": "user", "content": text, "name": None}


async def test_checkpoints_append_messages_and_replace_the_header(
    store: Store, run_id: str
) -> None:
    first = await store.write(
        Checkpoint(run_id, "running", header(1), 0, [message("a"), message("b")], prompt="task")
    )
    second = await store.write(Checkpoint(run_id, "running", header(2), 2, [message("c")]))
    assert first > second > 0
    stored = await store.load(run_id)
    assert stored.header["vm"] == {"pc": 2}
    assert [m["content"] for m in stored.messages] == ["a", "b", "c"]
    assert stored.record.prompt == "task" and stored.record.messages == 3


async def test_a_rewrite_replaces_the_stored_messages(store: Store, run_id: str) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, [message("a"), message("b")]))
    await store.write(
        Checkpoint(run_id, "running", header(2), 0, [message("summary")], rewrite=True)
    )
    assert [m["content"] for m in (await store.load(run_id)).messages] == ["summary"]


async def test_effects_are_written_once(store: Store, run_id: str) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, []))
    await store.write_effect(run_id, "c1", {"content": "first"})
    await store.write_effect(run_id, "c1", {"content": "second"})
    assert (await store.load(run_id)).effects == {"c1": {"content": "first"}}


async def test_listing_status_prune_and_delete(store: Store, run_id: str) -> None:
    ids = [f"{run_id}-{i}" for i in range(3)]
    for rid in ids:
        await store.write(Checkpoint(rid, "running", header(0), 0, []))
    await store.set_status(ids[0], "suspended")
    listed = [r.run_id for r in await store.list_runs(limit=1000) if r.run_id in ids]
    assert listed[0] == ids[0] and set(listed) == set(ids)  # newest update first
    suspended = [r.run_id for r in await store.list_runs(status="suspended", limit=1000)]
    assert ids[0] in suspended and ids[1] not in suspended
    await store.delete(ids[1])
    with pytest.raises(StoreError, match="no stored run"):
        await store.load(ids[1])
    with pytest.raises(StoreError, match="no stored run"):
        await store.set_status("no-such-run", "cancelled")


async def test_prune_keeps_the_newest(store: Store, run_id: str) -> None:
    for rid in await store.list_runs(limit=100000):
        await store.delete(rid.run_id)
    for i in range(4):
        await store.write(Checkpoint(f"{run_id}-{i}", "completed", header(0), 0, []))
    assert await store.prune(keep_last=1) == 3
    assert [r.run_id for r in await store.list_runs()] == [f"{run_id}-3"]
    assert await store.prune(older_than=-1) == 1


async def test_leases_exclude_a_second_owner(store: Store, run_id: str) -> None:
    await store.acquire(run_id, "a", ttl=60)
    await store.acquire(run_id, "a", ttl=60)  # re-entrant for the same owner
    with pytest.raises(RunLeaseError, match=run_id):
        await store.acquire(run_id, "b", ttl=60)
    await store.release(run_id, "a")
    await store.acquire(run_id, "b", ttl=60)
    await store.release(run_id, "b")
    await store.acquire(run_id, "c", ttl=-1)  # an expired lease does not block
    await store.acquire(run_id, "d", ttl=60)


async def test_foreign_checkpoint_format_is_refused(store: Store, run_id: str) -> None:
    await store.write(Checkpoint(run_id, "running", {"format": "other/9"}, 0, [message("a")]))
    with pytest.raises(StoreError, match="format 'other/9'"):
        await store.load(run_id)
    await store.write(Checkpoint(run_id, "running", header(3), 1, []))
    assert (await store.load(run_id)).header["vm"] == {"pc": 3}


async def test_unknown_run_is_a_clear_error(store: Store) -> None:
    with pytest.raises(StoreError, match="no stored run with id 'nope'"):
        await store.load("nope")


async def test_corrupted_rows_are_reported_and_the_rest_is_untouched(tmp_path: object) -> None:
    import sqlite3
    from pathlib import Path

    from ponder.store import SQLiteStore

    path = Path(str(tmp_path)) / "runs.sqlite3"
    store = SQLiteStore(path)
    await store.write(Checkpoint("bad", "running", header(1), 0, [message("a")]))
    await store.write(Checkpoint("good", "running", header(1), 0, [message("b")]))
    db = sqlite3.connect(path)
    db.execute("UPDATE ponder_messages SET body = '{not json' WHERE run_id = 'bad'")
    db.commit()
    with pytest.raises(StoreError, match="message 0 is not valid JSON"):
        await store.load("bad")
    db.execute("DELETE FROM ponder_messages WHERE run_id = 'good' AND idx = 0")
    db.execute("INSERT INTO ponder_messages VALUES ('good', 1, ?)", (json.dumps(message("x")),))
    db.commit()
    with pytest.raises(StoreError, match="gap at index 0"):
        await store.load("good")
    assert {r.run_id for r in await store.list_runs()} == {"bad", "good"}
    await store.close()


def test_open_store_rejects_unknown_urls() -> None:
    from ponder.exceptions import UserError
    from ponder.store import open_store

    with pytest.raises(UserError, match="unknown store URL"):
        open_store("redis://localhost")


async def test_a_cancelled_run_stays_cancelled_and_held_runs_are_not_pruned(
    store: Store, run_id: str
) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, []))
    await store.set_status(run_id, "cancelled")
    await store.write(Checkpoint(run_id, "running", header(2), 0, []))  # a late checkpoint
    assert (await store.load(run_id)).record.status == "cancelled"
    held = f"{run_id}-held"
    await store.write(Checkpoint(held, "running", header(0), 0, []))
    await store.acquire(held, "driver", ttl=60)
    await store.prune(older_than=-1)
    assert (await store.load(held)).record.run_id == held
    with pytest.raises(StoreError):
        await store.load(run_id)
    await store.release(held, "driver")


async def test_a_version_1_sqlite_store_is_migrated(tmp_path: object) -> None:
    import sqlite3
    from pathlib import Path

    from ponder.store import SQLiteStore

    path = Path(str(tmp_path)) / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE ponder_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO ponder_meta VALUES ('schema', '1');"
        "CREATE TABLE ponder_runs (run_id TEXT PRIMARY KEY, status TEXT NOT NULL,"
        " created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL,"
        " prompt TEXT NOT NULL DEFAULT '', header TEXT NOT NULL DEFAULT '{}',"
        " messages INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_until DOUBLE PRECISION);"
    )
    db.close()
    store = SQLiteStore(path)
    await store.write(Checkpoint("r", "completed", header(1), 0, [], session_id="s"))
    assert await store.latest_in_session("s") == "r"
    (version,) = (
        sqlite3.connect(path)
        .execute("SELECT value FROM ponder_meta WHERE key = 'schema'")
        .fetchone()
    )
    assert version == "4"
    await store.close()
    newer = sqlite3.connect(path)
    newer.execute("UPDATE ponder_meta SET value = '99'")
    newer.commit()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        SQLiteStore(path)


def event(seq: int, kind: str = "usage", **fields: object) -> dict[str, object]:
    return {"kind": kind, "seq": seq, "run_id": "r", "time": 1.0, **fields}


async def test_the_event_log_is_written_with_checkpoints_and_read_back(
    store: Store, run_id: str
) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, [], events=[event(1), event(2)]))
    await store.write(Checkpoint(run_id, "running", header(2), 0, [], events=[event(3)]))
    await store.append_events(run_id, [event(4, "run_finished", output="done")])
    assert [e["seq"] for e in await store.load_events(run_id)] == [1, 2, 3, 4]
    tail = await store.load_events(run_id, after=3)
    assert tail == [event(4, "run_finished", output="done")]
    # a resumed run renumbering events a crashed process wrote: the newer one stands
    await store.append_events(run_id, [event(4, "run_failed", error="x")])
    assert [e["kind"] for e in await store.load_events(run_id, after=3)] == ["run_failed"]
    await store.delete(run_id)
    assert await store.load_events(run_id) == []


async def test_event_values_json_cannot_hold_are_logged_as_their_text(
    store: Store, run_id: str
) -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd value"

    events = [
        event(1, data=Odd(), found=(1, "two"), when=datetime.date(2026, 12, 2)),
        event(2, text="cut \ud800 here", args={"n": 3}),
    ]
    await store.write(Checkpoint(run_id, "running", header(1), 0, [], events=events[:1]))
    await store.append_events(run_id, events[1:])
    assert await store.load_events(run_id) == [
        event(1, data="odd value", found=[1, "two"], when="2026-12-02"),
        event(2, text="cut \ufffd here", args={"n": 3}),
    ]


async def test_ids_are_found_by_prefix(store: Store, run_id: str) -> None:
    for suffix in ("a1", "a2", "b_%"):
        await store.write(Checkpoint(f"{run_id}{suffix}", "running", header(0), 0, []))
    assert await store.find_ids(f"{run_id}a") == [f"{run_id}a1", f"{run_id}a2"]
    assert await store.find_ids(f"{run_id}a", limit=1) == [f"{run_id}a1"]
    assert await store.find_ids(f"{run_id}b_") == [f"{run_id}b_%"]
    assert await store.find_ids(f"{run_id}b%") == []  # wildcards are taken literally
    assert await store.find_ids(f"{run_id}zz") == []


async def test_a_checkpoint_from_a_writer_without_the_lease_writes_nothing(
    store: Store, run_id: str
) -> None:
    await store.acquire(run_id, "holder", ttl=60)
    await store.write(Checkpoint(run_id, "running", header(1), 0, [message("a")], owner="holder"))
    await store.write_effect(run_id, "c1", {"content": "kept"})
    stranger = Checkpoint(
        run_id,
        "completed",
        header(9),
        1,
        [message("b")],
        owner="stranger",
        drop_effects=True,
        events=[event(1)],
    )
    with pytest.raises(RunLeaseError, match="holder"):
        await store.write(stranger)
    stored = await store.load(run_id)
    assert stored.header["vm"] == {"pc": 1} and stored.record.status == "running"
    assert [m["content"] for m in stored.messages] == ["a"]
    assert stored.effects == {"c1": {"content": "kept"}}
    assert await store.load_events(run_id) == []
    await store.release(run_id, "holder")


async def test_a_checkpoint_that_conflicts_with_stored_messages_writes_nothing(
    store: Store, run_id: str
) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, [message("a")]))
    with pytest.raises(RunLeaseError, match="conflict"):
        await store.write(
            Checkpoint(run_id, "running", header(2), 0, [message("b")], events=[event(1)])
        )
    stored = await store.load(run_id)
    assert stored.header["vm"] == {"pc": 1}
    assert [m["content"] for m in stored.messages] == ["a"]
    assert await store.load_events(run_id) == []


async def test_rewrites_to_a_longer_or_shorter_ledger_keep_exactly_the_new_messages(
    store: Store, run_id: str
) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, [message("a")]))
    longer = [message(t) for t in ("x", "y", "z")]
    await store.write(Checkpoint(run_id, "running", header(2), 0, longer, rewrite=True))
    assert [m["content"] for m in (await store.load(run_id)).messages] == ["x", "y", "z"]
    await store.write(Checkpoint(run_id, "running", header(3), 0, [message("s")], rewrite=True))
    await store.write(Checkpoint(run_id, "running", header(4), 1, [message("t")]))
    stored = await store.load(run_id)
    assert [m["content"] for m in stored.messages] == ["s", "t"] and stored.record.messages == 2


async def test_a_checkpoint_drops_the_effects_only_when_told(store: Store, run_id: str) -> None:
    await store.write(Checkpoint(run_id, "running", header(1), 0, []))
    await store.write_effect(run_id, "c1", {"content": "saved"})
    await store.write(Checkpoint(run_id, "running", header(2), 0, [message("a")]))
    assert (await store.load(run_id)).effects == {"c1": {"content": "saved"}}
    await store.write(Checkpoint(run_id, "running", header(3), 1, [], drop_effects=True))
    assert (await store.load(run_id)).effects == {}


_AWKWARD = [
    'quotes " and \\" escaped, a backslash \\ and a slash /',
    "brackets ] } [ { and commas , in text",
    "new\nline, tab\t, carriage\r, bell \x07 and other controls \x1f",
    "non-ASCII: ü, 中文, emoji 🧠, combining e\u0301, right-to-left \u202e",
    "",
]


async def test_bodies_with_awkward_text_come_back_exactly(store: Store, run_id: str) -> None:
    messages = [message(text) for text in _AWKWARD]
    events = [event(n, text=text) for n, text in enumerate(_AWKWARD, start=1)]
    await store.write(Checkpoint(run_id, "running", header(1), 0, messages[:2], events=events))
    await store.write(Checkpoint(run_id, "running", header(2), 2, messages[2:]))
    stored = await store.load(run_id)
    assert stored.messages == messages
    assert await store.load_events(run_id) == events
    rewritten = [message(text[::-1]) for text in _AWKWARD]
    await store.write(Checkpoint(run_id, "running", header(3), 0, rewritten, rewrite=True))
    assert (await store.load(run_id)).messages == rewritten
