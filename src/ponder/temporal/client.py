"""`TemporalAgent`: start, follow, decide and cancel ponder runs on a Temporal cluster.

The agent itself (model, tools, config) lives on the workers; a `TemporalAgent` only
names a task queue and, optionally, the worker-side agent and the tools a run needs. A
run's id is its workflow id. Misuse fails fast with a typed error: an unreachable address
(`TemporalUnreachableError`), a task queue no worker polls (`WorkerUnavailableError`), a
decision the run cannot take (`UserError`); a failed run raises `TemporalRunError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import timedelta
from typing import Any

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.service import RPCError, RPCStatusCode

from ponder.agent.launch import Prompt
from ponder.agent.limits import UsageLimits
from ponder.agent.result import RunResult
from ponder.agent.run.approval import check_decision
from ponder.events import Event, event_from_dict
from ponder.exceptions import PonderError, RunError, UserError
from ponder.messages import Message, messages_to_json
from ponder.temporal.continuation import HistoryBudget
from ponder.temporal.inputs import check_answers
from ponder.temporal.memo import status_from_memo
from ponder.temporal.prompts import prompt_input
from ponder.temporal.results import result_from_data
from ponder.temporal.verbs import TemporalVerbs
from ponder.temporal.workflow import MEMO_STATUS, WORKFLOW_NAME

__all__ = [
    "MEMO_PROMPT",
    "TemporalAgent",
    "TemporalRunError",
    "TemporalServiceError",
    "TemporalUnreachableError",
    "WorkerUnavailableError",
    "connect",
    "result_from_data",
    "service_errors",
]

_ENDS = frozenset({"run_finished", "run_failed", "run_cancelled"})
MEMO_PROMPT = "ponder_prompt"
"""The memo key holding (the start of) a run's prompt, for listings."""
_MEMO_PROMPT_CHARS = 200
_QUERY_TIMEOUT = timedelta(seconds=5)
_REPLAY_TIMEOUT = timedelta(seconds=60)
"""How long a query on a closed run may take: a worker replays the run's whole history
to answer it, which for a long run takes longer than a live run's query."""
_NO_ANSWER = (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE)
"""A query's timeout shows as one of these: no worker holds the run just now."""


class TemporalUnreachableError(UserError):
    """No Temporal server answered at the given address."""


class WorkerUnavailableError(UserError):
    """No worker polls the task queue a run was sent to."""


class TemporalServiceError(PonderError):
    """The Temporal server refused a request (its status and message say why)."""


class TemporalRunError(RunError):
    """A run on Temporal failed; ``error_type`` names the error that ended it."""

    def __init__(self, message: str, error_type: str = "") -> None:
        super().__init__(message)
        self.error_type = error_type


@contextlib.contextmanager
def service_errors() -> Iterator[None]:
    """Turn a request the Temporal server refuses (``RPCError``) into one clear error."""
    try:
        yield
    except RPCError as error:
        raise TemporalServiceError(
            f"the Temporal server refused the request ({error.status.name}): {error.message}"
        ) from None


async def connect(address: str, *, namespace: str = "default", timeout: float = 10.0) -> Client:
    """A client for the Temporal server at ``address`` (``host:port``).

    A server that is still starting ("not healthy yet") is waited for, up to ``timeout``.
    """
    try:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    return await Client.connect(address, namespace=namespace)
                except RuntimeError as error:
                    if "not healthy" not in str(error):
                        raise
                    await asyncio.sleep(0.5)
    except (RuntimeError, TimeoutError, OSError) as error:
        raise TemporalUnreachableError(
            f"cannot reach Temporal at {address!r}: {error or 'no answer'}; "
            "start one with `temporal server start-dev` or give --temporal HOST:PORT"
        ) from None


class TemporalAgent(TemporalVerbs):
    """Runs ponder runs on the workers of one task queue, with `Agent`'s verbs (`TemporalVerbs`).

    ``heartbeat_timeout`` (seconds, default 5): how soon a lost worker is noticed and a
    cancel reaches a running tool — within about this long. ``history_budget``: when a
    run continues as new (default: when Temporal suggests it).
    """

    def __init__(
        self,
        client: Client,
        task_queue: str,
        *,
        agent: str = "default",
        require_tools: Sequence[str] = (),
        heartbeat_timeout: float | None = None,
        history_budget: HistoryBudget | None = None,
        check_worker: bool = True,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.agent = agent
        self.require_tools = list(require_tools)
        self.heartbeat_timeout = heartbeat_timeout
        self.history_budget = history_budget
        self.check_worker = check_worker

    @classmethod
    async def connect(
        cls, address: str, task_queue: str, *, namespace: str = "default", **options: Any
    ) -> TemporalAgent:
        """A `TemporalAgent` for the server at ``address``."""
        return cls(await connect(address, namespace=namespace), task_queue, **options)

    async def has_worker(self) -> bool:
        """True when some worker has polled the task queue for workflow tasks lately."""
        return await self._polled(self.task_queue)

    async def _polled(self, task_queue: str) -> bool:
        request = DescribeTaskQueueRequest(
            namespace=self.client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
        answer = await self.client.workflow_service.describe_task_queue(request)
        return bool(answer.pollers)

    async def _wait_for_worker(self, seconds: float = 3.0, poll: float = 0.2) -> bool:
        """A worker that has just started polls within moments: give it that long."""
        for _ in range(max(1, int(seconds / poll))):
            if await self.has_worker():
                return True
            await asyncio.sleep(poll)
        return False

    async def start(
        self,
        prompt: Prompt,
        *,
        run_id: str | None = None,
        message_history: Sequence[Message] = (),
        session_id: str | None = None,
        limits: UsageLimits | None = None,
    ) -> str:
        """Start a run; returns its id at once (the workflow id).

        ``prompt``: text, or text with images and files as for `Agent.run` (carried in the
        run's input). ``limits`` bound the run as a local one's. Sessions are kept in a
        store, which a run on Temporal has not: a ``session_id`` is a `UserError` (give the
        earlier turns as ``message_history``).
        """
        limits = UsageLimits.of(limits)
        given = prompt_input(prompt)
        if session_id is not None:
            raise UserError(
                f"session_id={session_id!r}: sessions are not supported on Temporal (a session "
                "is kept in a store); pass the earlier turns as message_history"
            )
        if self.check_worker and not await self._wait_for_worker():
            raise WorkerUnavailableError(
                f"no worker polls task queue {self.task_queue!r}: start one with "
                f"`ponder worker --temporal HOST:PORT --task-queue {self.task_queue} ...`"
            )
        run_id = run_id or uuid.uuid4().hex
        data = {
            "run_id": run_id,
            **given,
            "agent": self.agent,
            "message_history": messages_to_json(message_history),
            "require_tools": self.require_tools,
            "heartbeat_timeout": self.heartbeat_timeout,
            "history_budget": self.history_budget and self.history_budget.to_data(),
        }
        if limits is not None:
            data["limits"] = limits.model_dump(exclude_none=True)
        await self.client.start_workflow(
            WORKFLOW_NAME,
            data,
            id=run_id,
            task_queue=self.task_queue,
            memo={MEMO_PROMPT: given["prompt"][:_MEMO_PROMPT_CHARS]},
        )
        return run_id

    def _handle(self, run_id: str) -> WorkflowHandle[Any, Any]:
        return self.client.get_workflow_handle(run_id)

    async def result(self, run_id: str, *, poll: float = 0.1) -> RunResult:
        """The run's result once it completes or suspends; a failed run raises.

        Suspension shows in the workflow's memo, so waiting costs the server a describe
        call now and then (backing off to one a second) and the workers nothing.
        """
        handle = self._handle(run_id)
        finished = asyncio.ensure_future(handle.result())
        try:
            while True:
                done, _ = await asyncio.wait({finished}, timeout=poll)
                if done:
                    return result_from_data(await _final(finished))
                poll = min(poll * 1.5, 1.0)
                memo = await (await handle.describe()).memo()
                if memo.get(MEMO_STATUS) != "suspended":
                    continue
                found = await self._query(handle, "result")
                if found is not None and found["status"] == "suspended":
                    return result_from_data(found)
        finally:
            if not finished.done():
                finished.cancel()

    async def _query(
        self,
        handle: WorkflowHandle[Any, Any],
        name: str,
        *args: Any,
        timeout: timedelta | None = None,
    ) -> Any:
        try:
            return await handle.query(name, *args, rpc_timeout=timeout or _QUERY_TIMEOUT)
        except RPCError as error:
            if error.status in _NO_ANSWER:
                return None  # no worker answered yet: the run goes on when one is back
            if _not_started(error):
                return None  # no worker ever took the run up, so none can answer for it
            raise

    async def status(self, run_id: str) -> dict[str, Any]:
        """``{"status", "output", ...}`` for a run in any state (a finished one needs no worker)."""
        handle = self._handle(run_id)
        try:
            described = await handle.describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise UserError(f"no run {run_id!r} on this Temporal namespace") from None
            raise
        kind = described.status
        if kind == WorkflowExecutionStatus.RUNNING:
            try:
                found = await self._query(handle, "status")
            except RPCError as error:  # say, a worker whose code cannot replay the run
                unanswered = await status_from_memo(run_id, described)
                unanswered["error"] = f"the workers cannot answer for this run: {error.message}"
                return unanswered
            if found is None:
                return await status_from_memo(run_id, described)
            return dict(found)
        if kind == WorkflowExecutionStatus.COMPLETED:
            data = await handle.result()
            return {
                "run_id": run_id,
                "status": data["status"],
                "output": data["output"],
                "stop_reason": data["stop_reason"],
                "usage": data["usage"],
                "cost": data.get("cost"),
            }
        try:
            await handle.result()
        except WorkflowFailureError as error:
            return {
                "run_id": run_id,
                "status": _status_of(error),
                "output": None,
                "error": str(error.cause),
            }
        name = kind.name.lower() if kind is not None else "unknown"
        return {"run_id": run_id, "status": name, "output": None}

    async def decide(self, run_id: str, decision: Any) -> bool:
        """Send a suspended run its decision (``"approve"``, ``"reject"`` or per call).

        True when a worker took it; False when none answered in time and the decision,
        checked against what the run's memo says it waits for, was left for the next
        worker (the ``decide_later`` Signal).
        """
        handle = self._handle(run_id)
        try:
            await handle.execute_update("decide", decision, rpc_timeout=_QUERY_TIMEOUT)
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            await self._decide_later(handle, decision)
            return False
        except WorkflowUpdateFailedError as error:
            cause = error.cause
            text = cause.message if isinstance(cause, ApplicationError) else str(cause)
            raise UserError(text) from None
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise UserError(f"no running run {run_id!r} to decide") from None
            if error.status in _NO_ANSWER:
                await self._decide_later(handle, decision)
                return False
            raise
        return True

    async def _decide_later(self, handle: WorkflowHandle[Any, Any], decision: Any) -> None:
        found = await status_from_memo(handle.id, await handle.describe())
        suspension = found.get("suspension")
        if found["status"] != "suspended" or not suspension:
            raise UserError(
                f"run {handle.id!r} is {found['status']} as far as its memo says, and no "
                "worker answers to say more: start a worker for its task queue"
            )
        if suspension.get("reason") == "approval":
            check_decision(decision, [str(c["id"]) for c in suspension["payload"]["calls"]])
        elif suspension.get("reason") == "elicitation":
            check_answers(suspension["payload"], decision)
        await handle.signal("decide_later", decision)

    async def cancel(self, run_id: str) -> str:
        """Cancel the run; it ends as ``cancelled``, like a local run.

        Returns its status just after: ``cancelled``, or ``cancelling`` while its tools
        stop (or while no worker runs it: it ends when one picks it up).
        """
        handle = self._handle(run_id)
        try:
            before = await handle.describe()
            if before.status != WorkflowExecutionStatus.RUNNING:
                status = (await self.status(run_id))["status"]
                raise UserError(f"run {run_id!r} already {status}; there is nothing to cancel")
            await handle.cancel()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise UserError(f"no run {run_id!r} on this Temporal namespace") from None
            raise
        described = await handle.describe()
        if described.status == WorkflowExecutionStatus.RUNNING:
            return "cancelling"
        return str((await self.status(run_id))["status"])

    async def events(self, run_id: str, after: int = 0) -> list[Event]:
        """The run's events after sequence number ``after`` (needs a live worker).

        A closed run is answered by replaying its whole history, so a long one is given
        ``_REPLAY_TIMEOUT`` rather than read as having no events, when a worker polls its
        task queue (with none, nobody could answer: the answer is empty at once).
        """
        handle = self._handle(run_id)
        found = await self._query(handle, "events", after)
        if found is None:
            described = await handle.describe()
            closed = described.status != WorkflowExecutionStatus.RUNNING
            if closed and await self._polled(described.task_queue):
                found = await self._query(handle, "events", after, timeout=_REPLAY_TIMEOUT)
        return [event_from_dict(e) for e in found or ()]

    async def follow(
        self, run_id: str, *, after: int = 0, poll: float = 0.2
    ) -> AsyncIterator[Event]:
        """Yield the run's events as they happen, until it ends or suspends.

        A run that fails before its first event (say, on a worker without a tool it
        needs) ends the iteration too; ``result`` then says why.
        """
        handle = self._handle(run_id)
        while True:
            batch = await self.events(run_id, after)
            for event in batch:
                yield event
                after = event.seq
            if batch and (batch[-1].kind in _ENDS or batch[-1].kind == "run_suspended"):
                return
            if not batch and (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                for event in await self.events(run_id, after):  # what it did as it closed
                    yield event
                return
            await asyncio.sleep(poll)


async def _final(finished: asyncio.Future[Any]) -> dict[str, Any]:
    try:
        data: dict[str, Any] = finished.result()
    except WorkflowFailureError as error:
        cause = error.cause
        if isinstance(cause, CancelledError):
            raise TemporalRunError("the run was cancelled", "CancelledError") from None
        kind = cause.type if isinstance(cause, ApplicationError) and cause.type else ""
        message = cause.message if isinstance(cause, ApplicationError) else str(cause)
        raise TemporalRunError(message, kind or type(cause).__name__) from None
    return data


def _not_started(error: RPCError) -> bool:
    """The server's refusal to query a run no worker has started (say, ended before one did)."""
    return error.status == RPCStatusCode.FAILED_PRECONDITION and any(
        detail.type_url.endswith("WorkflowNotReadyFailure") for detail in error.grpc_status.details
    )


def _status_of(error: WorkflowFailureError) -> str:
    return "cancelled" if isinstance(error.cause, CancelledError) else "failed"
