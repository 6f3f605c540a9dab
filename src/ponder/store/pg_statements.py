"""The PostgreSQL store's own statements: a whole checkpoint in one, a lazily committed effect.

`ponder.store.sql` holds the statements both SQL stores share (``?`` placeholders);
`to_pg` maps them to psycopg's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ponder.store import sql
from ponder.store.base import Checkpoint

__all__ = [
    "APPEND",
    "APPEND_CLEARING",
    "GENERIC_PLANS",
    "INSERT_EFFECT",
    "LAZY_COMMIT",
    "REWRITE",
    "REWRITE_CLEARING",
    "checkpoint_args",
    "checkpoint_statement",
    "json_array",
    "landed",
    "statement_for",
    "to_pg",
]


def to_pg(statement: str) -> str:
    """A `ponder.store.sql` statement with psycopg's placeholders."""
    return statement.replace("?", "%s")


def checkpoint_statement(rewrite: bool, clears: bool) -> str:
    """One statement for a whole checkpoint, so it costs one round trip and commits alone.

    The run row is written only if the writer holds the lease; every other row joins on
    it, so a fenced checkpoint writes nothing and returns 0. A rewrite replaces the
    messages in place and deletes those outside the new range (rows that one statement
    both deletes and inserts would collide). Only a statement that ``clears`` deletes the
    effect rows: a part that deletes nothing still costs the server a sixth of the statement.

    Message and event bodies travel as one JSON array each (``json`` keeps every element's
    text as it was sent): a text array would need every body quoted and escaped, which
    cost about half of a checkpoint's client time. An event's ``seq`` is read from
    its body by the server, so no integer array needs adapting either.
    """
    added = (
        "INSERT INTO ponder_messages (run_id, idx, body)"
        " SELECT run.run_id, (%s::integer + m.n - 1)::integer, m.body::text FROM run,"
        " json_array_elements(%s::json) WITH ORDINALITY AS m (body, n)"
    )
    if rewrite:
        added += " ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body"
    parts = [
        f"WITH run AS ({to_pg(sql.UPSERT_RUN)} RETURNING run_id)",
        f"added AS ({added})",
        "logged AS (INSERT INTO ponder_events (run_id, seq, body)"
        " SELECT run.run_id, (e.body->>'seq')::integer, e.body::text FROM run,"
        " json_array_elements(%s::json) AS e (body)"
        " ON CONFLICT (run_id, seq) DO UPDATE SET body = excluded.body)",
    ]
    if clears:
        parts.append(
            "cleared AS (DELETE FROM ponder_effects WHERE run_id IN (SELECT run_id FROM run))"
        )
    if rewrite:
        parts.append(
            "stale AS (DELETE FROM ponder_messages"
            " WHERE run_id IN (SELECT run_id FROM run) AND (idx < %s OR idx >= %s))"
        )
    return ", ".join(parts) + " SELECT count(*) FROM run"


GENERIC_PLANS = (
    "SELECT set_config('plan_cache_mode', 'force_generic_plan', false)"
    " WHERE current_setting('plan_cache_mode', true) = 'auto'"
)
"""Prepared statements keep one plan: left to itself, PostgreSQL plans the checkpoint
statement again on every run. A setting the connection string chose stays."""
APPEND = checkpoint_statement(rewrite=False, clears=False)
APPEND_CLEARING = checkpoint_statement(rewrite=False, clears=True)
REWRITE = checkpoint_statement(rewrite=True, clears=False)
REWRITE_CLEARING = checkpoint_statement(rewrite=True, clears=True)


def statement_for(checkpoint: Checkpoint) -> str:
    """The statement that writes ``checkpoint`` (`checkpoint_args` are its arguments)."""
    if checkpoint.rewrite:
        return REWRITE_CLEARING if checkpoint.drop_effects else REWRITE
    return APPEND_CLEARING if checkpoint.drop_effects else APPEND


LAZY_COMMIT = "WITH lazy AS (SELECT set_config('synchronous_commit', 'off', true))"
"""The head of a statement whose transaction (its own, in autocommit) commits without
waiting for the WAL flush; the statement selects ``FROM lazy``."""
INSERT_EFFECT = (
    f"{LAZY_COMMIT} INSERT INTO ponder_effects (run_id, call_id, body)"
    " SELECT %s, %s, %s FROM lazy ON CONFLICT (run_id, call_id) DO NOTHING"
)
"""A call's result, committed without waiting for the WAL flush (its transaction only).

Losing it takes a crash of the server, not of the process, in the moment before the WAL
writer or the run's next checkpoint (a synchronous commit, later in the same WAL) flushes
it; the run then resumes as if it had stopped while the call ran, which it must handle
anyway. Waiting for the flush cost a tool step about 0.2 ms.
"""


def checkpoint_args(
    checkpoint: Checkpoint,
    run_row: tuple[Any, ...],
    message_rows: list[tuple[Any, ...]],
    event_rows: list[tuple[Any, ...]],
) -> tuple[Any, ...]:
    """The arguments of `statement_for` ``checkpoint``: bodies as JSON arrays (see there)."""
    events = {seq: body for _, seq, body in event_rows}  # one row per seq, the last wins
    args: tuple[Any, ...] = (
        *run_row,
        checkpoint.first_index,
        json_array(body for _, _, body in message_rows),
        json_array(events.values()),
    )
    if checkpoint.rewrite:
        args += (checkpoint.first_index, checkpoint.first_index + len(message_rows))
    return args


def json_array(bodies: Iterable[str]) -> str:
    """JSON texts joined into the text of one JSON array."""
    return f"[{','.join(bodies)}]"


async def landed(conn: Any, run_row: tuple[Any, ...]) -> bool:
    """Whether the run row is the one this checkpoint wrote (its own ``updated`` stamp)."""
    cursor = await conn.execute(to_pg(sql.SELECT_STAMP), (run_row[0],))
    found = await cursor.fetchone()
    return found is not None and tuple(found) == (run_row[3], run_row[5], run_row[6])
