"""The sessions to one MCP server, each lent to at most one run at a time.

A server's sampling and elicitation requests and its logs do not say which tool call
caused them: the SDK sends a request's ``related_request_id`` only as transport routing
(an HTTP response stream), and the client's callbacks receive the server's own request id.
So nothing that arrives on a session shared by two runs can be told apart. Instead a run
borrows a session of its own: from its first call on the server until the run unbinds (a
run that is not bound, until its calls end). Everything that arrives on that session
belongs to that run. Concurrent runs get new sessions; a returned one waits idle for the
next run, and all of them close with the pool. The first session also lists the tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ponder.mcp.client import MCPServerConnection

__all__ = ["SessionPool"]


@dataclass
class _Loan:
    """One run's session: which slot, its calls in flight, whether the run still holds it."""

    slot: int
    calls: int = 0
    held: bool = False


class SessionPool:
    """The sessions to one server by slot, and the run each is lent to."""

    def __init__(self, open_session: Callable[[int], MCPServerConnection]) -> None:
        """Start with one session; ``open_session(slot)`` makes another when runs overlap."""
        self._open = open_session
        self.sessions: list[MCPServerConnection] = [open_session(0)]
        self._holders: list[str | None] = [None]
        self._loans: dict[str, _Loan] = {}

    @property
    def home(self) -> MCPServerConnection:
        """The first session: it lists the server's tools and reads its resources."""
        return self.sessions[0]

    def holder(self, slot: int) -> str | None:
        """The run the session at ``slot`` is lent to (None when it is idle)."""
        return self._holders[slot] if 0 <= slot < len(self._holders) else None

    @contextmanager
    def lent(self, run_id: str, *, hold: bool) -> Iterator[MCPServerConnection]:
        """``run_id``'s session for one call; with ``hold`` the run keeps it after the call."""
        loan = self._loans.get(run_id) or self._lend(run_id)
        loan.calls += 1
        loan.held = loan.held or hold
        try:
            yield self.sessions[loan.slot]
        finally:
            loan.calls -= 1
            self._settle(run_id, loan)

    def give_back(self, run_id: str) -> None:
        """``run_id`` no longer holds its session; it is idle once the run's calls end."""
        loan = self._loans.get(run_id)
        if loan is not None:
            loan.held = False
            self._settle(run_id, loan)

    async def close(self) -> None:
        """Close every session."""
        await asyncio.gather(*(session.close() for session in self.sessions))

    def _lend(self, run_id: str) -> _Loan:
        slot = next((i for i, held in enumerate(self._holders) if held is None), None)
        if slot is None:
            slot = len(self.sessions)
            self.sessions.append(self._open(slot))
            self._holders.append(None)
        self._holders[slot] = run_id
        loan = self._loans[run_id] = _Loan(slot)
        return loan

    def _settle(self, run_id: str, loan: _Loan) -> None:
        if loan.calls == 0 and not loan.held and self._loans.get(run_id) is loan:
            del self._loans[run_id]
            self._holders[loan.slot] = None
