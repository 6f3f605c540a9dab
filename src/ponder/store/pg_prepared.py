"""A step's writes on PostgreSQL, run on libpq directly (through psycopg's ``pgconn``).

A tool step writes twice: its checkpoint, then its tool result. psycopg's ``execute`` is
made for any statement: it looks the statement up in its cache, adapts each argument,
arms a timer and polls the socket for writing before it waits, and keeps the reply in a
cursor. These writes need none of that. Each is a statement `prepare` names on every
connection when it opens (all in one round trip), its arguments are text, and its reply
is at most one row: `run` sends it (``PQsendQueryPrepared``) and waits once for the
socket to be readable.

Errors are psycopg's own classes, so the store handles them as it does psycopg's. A
statement the session lost (psycopg sends ``DEALLOCATE ALL`` after a rollback) is prepared
again. A wait cancelled mid-statement does what psycopg does: it asks the server to cancel
the statement and reads the reply out before it raises, so the connection goes back to the
pool idle and the statement cannot land after a later one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from psycopg import pq

from ponder.store.pg_statements import (
    APPEND,
    APPEND_CLEARING,
    INSERT_EFFECT,
    REWRITE,
    REWRITE_CLEARING,
)

__all__ = ["NAMES", "prepare", "run"]

NAMES = {
    APPEND: b"ponder_append",
    APPEND_CLEARING: b"ponder_append_clearing",
    REWRITE: b"ponder_rewrite",
    REWRITE_CLEARING: b"ponder_rewrite_clearing",
    INSERT_EFFECT: b"ponder_effect",
}
"""The server-side name of each statement `run` takes."""
DRAIN_SECONDS = 5.0
"""How long a cancelled wait reads the reply out before it gives the connection up."""
_DONE = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


def numbered(statement: str) -> bytes:
    """A psycopg statement (``%s`` placeholders) with the server's ``$1, $2, ...``."""
    parts = statement.split("%s")
    text = parts[0] + "".join(f"${n}{part}" for n, part in enumerate(parts[1:], start=1))
    return text.encode()


async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
    """Name every statement `run` takes on ``conn``, in one round trip (a libpq pipeline)."""
    pgconn = conn.pgconn
    pgconn.enter_pipeline_mode()
    try:
        for statement, name in NAMES.items():
            pgconn.send_prepare(name, numbered(statement))
        pgconn.pipeline_sync()
        results = await _pipeline_results(pgconn)
    finally:
        if pgconn.status == pq.ConnStatus.OK:
            pgconn.exit_pipeline_mode()
    for result in results:
        _check(pgconn, result)


async def _pipeline_results(pgconn: pq.abc.PGconn) -> list[pq.abc.PGresult]:
    """The results of a pipeline up to its sync point (a failed command aborts the rest)."""
    results: list[pq.abc.PGresult] = []
    while True:
        result = await _next_result(pgconn)
        if result is None:  # the end of one command's results, or of the connection
            if pgconn.status == pq.ConnStatus.BAD:
                raise psycopg.OperationalError(pgconn.get_error_message())
            continue
        if result.status == pq.ExecStatus.PIPELINE_SYNC:
            return results
        results.append(result)


async def run(conn: psycopg.AsyncConnection[Any], statement: str, args: tuple[Any, ...]) -> Any:
    """Run one of the prepared statements; the text of its first row's first value, or None.

    A psycopg error if the statement fails or the connection drops.
    """
    name = NAMES[statement]
    params = [value.encode() if type(value) is str else _text(value) for value in args]
    try:
        return _first_value(await _exchange(conn, name, params))
    except psycopg.errors.InvalidSqlStatementName:  # the session lost it: prepare it again
        conn.pgconn.send_prepare(name, numbered(statement))
        _check(conn.pgconn, await _reply(conn))
        return _first_value(await _exchange(conn, name, params))


async def _exchange(conn: psycopg.AsyncConnection[Any], name: bytes, params: list[Any]) -> Any:
    conn.pgconn.send_query_prepared(name, params)
    result = await _reply(conn)
    _check(conn.pgconn, result)
    return result


async def _reply(conn: psycopg.AsyncConnection[Any]) -> pq.abc.PGresult | None:
    """The reply to the command just sent; a cancelled wait cancels it and reads it out."""
    try:
        return await _read_reply(conn.pgconn)
    except asyncio.CancelledError:
        await _abandon(conn)
        raise


async def _abandon(conn: psycopg.AsyncConnection[Any]) -> None:
    """Stop the statement as psycopg does; close the connection if no reply comes in time.

    The server is asked to cancel it, and its reply read out through further cancellations.
    """
    loop = asyncio.get_running_loop()
    pgconn = conn.pgconn
    reading = asyncio.ensure_future(_read_reply(pgconn))
    asking = asyncio.ensure_future(_cancel_on_server(conn))
    timer = loop.call_later(DRAIN_SECONDS, reading.cancel)
    while not reading.done():  # a cancelled read has let go of the socket once it is done
        try:
            await asyncio.wait((reading,))
        except asyncio.CancelledError:
            pass
    timer.cancel()
    asking.cancel()
    if reading.cancelled():
        pgconn.finish()  # no reply in time: the pool replaces a closed connection
    else:
        reading.exception()  # whatever it was, the cancellation is what the caller gets


async def _cancel_on_server(conn: psycopg.AsyncConnection[Any]) -> None:
    """Ask the server to cancel the running statement (psycopg 3.2 and later can)."""
    cancel = getattr(conn, "cancel_safe", None)  # psycopg 3.1: the statement runs to its end
    if cancel is None:
        return
    try:
        await cancel(timeout=DRAIN_SECONDS)
    except Exception:  # the reply, or its absence, decides what happens to the connection
        return


async def _read_reply(pgconn: pq.abc.PGconn) -> pq.abc.PGresult | None:
    result = await _next_result(pgconn)
    while pgconn.get_result() is not None:  # a command's results end with None
        pass
    return result


async def _next_result(pgconn: pq.abc.PGconn) -> pq.abc.PGresult | None:
    """The next result once the server has sent it (None: the end of a command's results)."""
    loop = asyncio.get_running_loop()
    await _flushed(loop, pgconn)
    pgconn.consume_input()
    while pgconn.is_busy():
        await _ready(loop, pgconn.socket, writing=False)
        pgconn.consume_input()
    return pgconn.get_result()


async def _flushed(loop: asyncio.AbstractEventLoop, pgconn: pq.abc.PGconn) -> None:
    while pgconn.flush():  # only when the socket's send buffer was full
        await _ready(loop, pgconn.socket, writing=True)


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, *, writing: bool) -> None:
    ready = loop.create_future()
    if writing:
        loop.add_writer(fd, _wake, ready)
    else:
        loop.add_reader(fd, _wake, ready)
    try:
        await ready
    finally:
        if writing:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def _check(pgconn: pq.abc.PGconn, result: pq.abc.PGresult | None) -> None:
    """Raise the psycopg error a failed command (or a dropped connection) stands for."""
    if result is None:
        message = pgconn.get_error_message() or "the server sent no reply"
        raise psycopg.OperationalError(message)
    if result.status in _DONE:
        return
    state = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
    try:
        error = psycopg.errors.lookup(state)
    except KeyError:
        error = psycopg.OperationalError if pgconn.status == pq.ConnStatus.BAD else psycopg.Error
    raise error(result.get_error_message(), info=result)


def _first_value(result: Any) -> Any:
    return result.get_value(0, 0) if result.ntuples else None


def _text(value: Any) -> bytes | None:
    """A parameter in PostgreSQL's text format (the server knows each one's type)."""
    if value is None:
        return None
    if value is True or value is False:
        return b"t" if value else b"f"
    if isinstance(value, str):
        return value.encode()
    return repr(value).encode()  # int, float: repr round-trips a float exactly
