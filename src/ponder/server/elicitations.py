"""MCP elicitation over the runs API: a server's question waits here for a client's answer.

A run driven by ``ponder serve`` whose MCP server asks for input emits an ``mcp_event``
(``type`` ``elicitation``) with the request's ``id``; the question is listed at ``GET
/v1/runs/{run_id}/elicitations`` and answered with ``POST /v1/runs/{run_id}/elicitations/{id}``
(``{"action": "accept", "content": {...}}``).

With a store (``ponder serve --store``) the run suspends on the question (``status``
``held``, then ``run_suspended`` with reason ``elicitation``), so it survives a restart of
the server; the POST resumes it with the answer, which makes the tool call again (see
``ponder.agent.run.elicitation``). An answer that does not match the schema is a 400 and
the question stays open. Without a store the question waits in this process for the
answer, checked against the schema by the MCP client, and cancels after
`PendingElicitations.timeout` seconds.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict

from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ponder.store.view import pending_questions

__all__ = ["ElicitationReply", "PendingElicitations", "router"]

router = APIRouter(prefix="/v1/runs", tags=["elicitation"])


class ElicitationReply(BaseModel):
    """A client's answer to one elicitation request."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class PendingElicitations:
    """Elicitation requests waiting for an answer, by run and id."""

    def __init__(self, timeout: float = 600.0) -> None:
        self.timeout = timeout
        self._waiting: dict[str, tuple[ElicitationRequest, asyncio.Future[ElicitationAnswer]]] = {}

    async def ask(self, request: ElicitationRequest) -> ElicitationAnswer:
        """Wait for a client to answer ``request`` (``cancel`` after the timeout)."""
        future: asyncio.Future[ElicitationAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[request.id] = (request, future)
        try:
            async with asyncio.timeout(self.timeout):
                return await future
        except TimeoutError:
            return ElicitationAnswer("cancel")
        finally:
            self._waiting.pop(request.id, None)

    def pending(self, run_id: str) -> list[ElicitationRequest]:
        """The unanswered requests of ``run_id``, oldest first."""
        return [r for r, _ in self._waiting.values() if r.run_id == run_id]

    def answer(self, run_id: str, request_id: str, reply: ElicitationReply) -> bool:
        """Give ``reply`` to the request; False when no such request is waiting."""
        found = self._waiting.get(request_id)
        if found is None or found[0].run_id != run_id or found[1].done():
            return False
        found[1].set_result(ElicitationAnswer(reply.action, reply.content))
        return True


def _pending(request: Request) -> PendingElicitations:
    found: PendingElicitations = request.app.state.launcher.elicitations
    return found


async def _held(request: Request, run_id: str) -> list[dict[str, Any]]:
    """The questions a suspended run of the store waits on."""
    record = await request.app.state.launcher.lookup(run_id)
    if record is None or record.status != "suspended":
        return []
    return pending_questions(record.suspension)


@router.get("/{run_id}/elicitations")
async def list_elicitations(run_id: str, request: Request) -> dict[str, Any]:
    """The run's questions that wait for an answer (live, or held by a suspended run)."""
    live = [asdict(r) for r in _pending(request).pending(run_id)]
    return {"data": live + await _held(request, run_id)}


@router.post("/{run_id}/elicitations/{request_id}")
async def answer_elicitation(
    run_id: str, request_id: str, reply: ElicitationReply, request: Request
) -> dict[str, Any]:
    """Answer one question; 404 when it is not (or no longer) waiting.

    A suspended run resumes with the answer (400 when it does not match the schema).
    """
    if _pending(request).answer(run_id, request_id, reply):
        return {"id": request_id, "action": reply.action}
    if not any(q.get("id") == request_id for q in await _held(request, run_id)):
        raise HTTPException(404, f"no elicitation {request_id!r} waits in run {run_id!r}")
    launcher = request.app.state.launcher
    record = await launcher.lookup(run_id)
    await launcher.resume(record, {request_id: reply.model_dump(exclude_none=True)})
    return {"id": request_id, "action": reply.action, "resumed": True}
