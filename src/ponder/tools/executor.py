"""Running a batch of tool calls: concurrently, isolated, in order, with timeouts.

Every call ends in exactly one `ToolOutcome`: a tool that raises (even ``SystemExit``,
``KeyboardInterrupt`` or ``GeneratorExit``), hangs past its timeout, is unknown or gets
bad arguments produces an error result for that call only, and its siblings run on.
Outcomes come back in call order. Cancelling ``run_batch`` cancels the calls still
running. Calls of one stateful tool within one run take turns on a lock; other runs never
wait on it.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import time
import weakref
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ponder.exceptions import UserError
from ponder.messages import ToolCallPart, ToolMessage
from ponder.shared_fields import built, shared_fields_set
from ponder.status import CallStatus
from ponder.tools.arguments import (
    ArgumentError,
    issues_from_validation_error,
    parse_arguments_lenient,
)
from ponder.tools.decorator import to_tool_result
from ponder.tools.eager import CallTimedOut, await_timed
from ponder.tools.redact import describe
from ponder.tools.registry import ToolRegistry
from ponder.tools.storable import storable
from ponder.tools.threads import start_together
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = [
    "ToolExecutor",
    "ToolIntercept",
    "ToolOutcome",
    "ToolRun",
    "ToolStatus",
    "truncate_output",
]

ToolStatus = CallStatus
"""How one call ended (`ponder.status.CallStatus`)."""
StartCallback = Callable[[ToolCallPart], Any]
FinishCallback = Callable[["ToolOutcome"], Any]
ToolRun = Callable[[], Awaitable[tuple["ToolResult", ToolStatus]]]
"""Running one call as the executor does: its result and status, before post-processing."""
ToolIntercept = Callable[
    [ToolCallPart, "Tool | None", ToolRun], Awaitable[tuple["ToolResult", ToolStatus]]
]
"""Runs around one call (``intercept(call, tool, run)``): may call ``run()`` or answer itself."""


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """How one call ended: the full result, a status, and the ledger message for it.

    ``message.content`` is the output as the model sees it (truncated past the executor's
    limit); ``result.output`` is never truncated.
    """

    call: ToolCallPart
    result: ToolResult
    status: ToolStatus
    duration: float
    message: ToolMessage
    truncated_chars: int = 0

    @property
    def is_error(self) -> bool:
        """True unless the tool succeeded."""
        return not self.result.success


def truncate_output(text: str, limit: int | None) -> tuple[str, int]:
    """``text`` cut to about ``limit`` characters (head and tail kept), and how much was cut."""
    if limit is None or len(text) <= limit:
        return text, 0
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - limit
    note = (
        f"\n\n[... {cut} of {len(text)} characters cut here; "
        "ask for a smaller part if you need the rest ...]\n\n"
    )
    return text[:head] + note + text[len(text) - tail :], cut


@dataclass(slots=True)
class _Batch:
    run_id: str
    states: MutableMapping[str, BaseModel]
    deps: Any
    on_start: StartCallback | None
    on_finish: FinishCallback | None
    intercept: ToolIntercept | None = None
    run: Any = None
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)


class ToolExecutor:
    """Runs tool calls against a registry; holds no run state of its own."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        default_timeout: float | None = 60.0,
        max_output_chars: int | None = 20000,
    ) -> None:
        if default_timeout is not None and not default_timeout > 0:
            raise UserError("default_timeout must be a positive number of seconds or None")
        if max_output_chars is not None and max_output_chars < 1:
            raise UserError("max_output_chars must be at least 1 or None")
        self.registry = registry
        self.default_timeout = default_timeout
        self.max_output_chars = max_output_chars
        self._locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._background: set[asyncio.Future[None]] = set()
        self._limits: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    async def run_batch(
        self,
        calls: Sequence[ToolCallPart],
        *,
        run_id: str,
        states: MutableMapping[str, BaseModel] | None = None,
        deps: Any = None,
        on_start: StartCallback | None = None,
        on_finish: FinishCallback | None = None,
        intercept: ToolIntercept | None = None,
        run: Any = None,
    ) -> list[ToolOutcome]:
        """Run ``calls`` concurrently; one outcome per call, in call order.

        ``states`` holds the run's stateful-tool states by tool name (missing ones are
        created). ``on_start(call)`` and ``on_finish(outcome)`` fire once per call, also
        for a call cut short by cancellation (with status ``cancelled``). ``intercept``
        runs around each call (a recorder, a replay, a tracer). ``run`` reaches each call
        as `ToolContext.run`.
        """
        batch = _Batch(
            run_id, {} if states is None else states, deps, on_start, on_finish, intercept, run
        )
        if len(calls) == 1:
            return [await self._run_one(calls[0], batch)]
        tasks = []  # a loop, not a comprehension: a waiting call's frames keep no cells
        for call in calls:
            tasks.append(asyncio.ensure_future(self._run_one(call, batch)))
        if tasks:  # their threads start once all have taken a first step
            start_together(tasks[0].get_loop())
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def run_call(self, call: ToolCallPart, *, run_id: str, **options: Any) -> ToolOutcome:
        """Run one call; takes the same keyword options as `run_batch`."""
        (outcome,) = await self.run_batch([call], run_id=run_id, **options)
        return outcome

    async def _run_one(self, call: ToolCallPart, batch: _Batch) -> ToolOutcome:
        start = time.perf_counter()
        if batch.on_start is not None:
            await _notify(batch.on_start, call)
        try:
            if batch.intercept is None:
                result, status = await self._execute(call, batch)
            else:
                found = self.registry.get(call.name)
                result, status = await batch.intercept(
                    call, found, functools.partial(self._execute, call, batch)
                )
        except asyncio.CancelledError:
            cancelled = ToolResult.fail("the call was cancelled before it finished")
            if batch.on_finish is not None:
                await _notify(batch.on_finish, self._outcome(call, cancelled, "cancelled", start))
            raise
        outcome = self._outcome(call, result, status, start)
        if batch.on_finish is not None:
            await _notify(batch.on_finish, outcome)
        return outcome

    async def _execute(self, call: ToolCallPart, batch: _Batch) -> tuple[ToolResult, ToolStatus]:
        found = self.registry.get(call.name)
        if found is None:
            return self._unknown_tool(call.name), "unknown_tool"
        try:
            args = _validated_arguments(call, found)
        except ArgumentError as exc:
            return _invalid(found.name, exc), "invalid_arguments"
        except Exception as exc:
            return ToolResult.fail(f"validating the arguments failed: {describe(exc)}"), "error"
        ctx = ToolContext(
            run_id=batch.run_id,
            call_id=call.id,
            tool_name=found.name,
            deps=batch.deps,
            run=batch.run,
        )
        if found.state_type is not None:
            try:
                ctx.state = _state_for(found, batch.states)
            except Exception as exc:
                return ToolResult.fail(
                    f"the tool's saved state is unusable: {describe(exc)}"
                ), "error"
            ctx.lock = self._lock_for(batch, found.name)
        limit = self._limit_for(found)
        if ctx.lock is None and limit is None:
            return await self._invoke(found, ctx, args)
        held: list[asyncio.Lock | asyncio.Semaphore] = []
        try:
            for guard in (ctx.lock, limit):
                if guard is not None:
                    await guard.acquire()
                    held.append(guard)
            return await self._invoke(found, ctx, args)
        finally:
            self._release(ctx, held)

    def _release(self, ctx: ToolContext, held: list[asyncio.Lock | asyncio.Semaphore]) -> None:
        """Release ``held`` now, or once the call's thread ends if it outlived the call."""
        worker = ctx.worker
        if worker is None or worker.done():
            for guard in reversed(held):
                guard.release()
            return
        task = asyncio.ensure_future(_release_after(worker, held))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _invoke(
        self, found: Tool, ctx: ToolContext, args: dict[str, Any]
    ) -> tuple[ToolResult, ToolStatus]:
        timeout = found.timeout if found.timeout is not None else self.default_timeout
        start = time.perf_counter()
        try:
            result = to_tool_result(await await_timed(found.function(ctx, args), timeout, start))
            if timeout is not None and time.perf_counter() - start > timeout:
                return _blocked(found.name, timeout, time.perf_counter() - start), "timeout"
            return result, "ok"
        except CallTimedOut:
            still_running = ctx.worker is not None and not ctx.worker.done()
            return _timed_out(found.name, timeout, still_running), "timeout"
        except ArgumentError as exc:
            return _invalid(found.name, exc), "invalid_arguments"
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return ToolResult.fail("the tool cancelled itself before it finished"), "cancelled"
        except Exception as exc:
            return ToolResult.fail(describe(exc)), "error"
        except (SystemExit, KeyboardInterrupt, GeneratorExit) as exc:
            return _escaped(exc), "error"

    def _outcome(
        self, call: ToolCallPart, result: ToolResult, status: ToolStatus, start: float
    ) -> ToolOutcome:
        result, refused = storable(call.name, result)
        if refused:
            status = "error"
        if result.success != (status == "ok"):
            result = result.model_copy(update={"success": status == "ok"})
        content, cut = truncate_output(result.output, self.max_output_chars)
        data = result.output if cut and result.data is None else result.data
        message = built(
            ToolMessage,
            {
                "kind": "tool",
                "call_id": call.id,
                "name": call.name,
                "content": content,
                "data": data,
                "is_error": status != "ok",
                "attachments": result.attachments,
            },
            _ANSWERED,
        )
        return ToolOutcome(call, result, status, time.perf_counter() - start, message, cut)

    def _unknown_tool(self, name: str) -> ToolResult:
        names = self.registry.names
        text = f"unknown tool {name!r}. Available tools: {', '.join(names) or 'none'}."
        close = difflib.get_close_matches(name, names, n=1)
        if close:
            text += f" Did you mean {close[0]!r}?"
        return ToolResult.fail(text)

    def _lock_for(self, batch: _Batch, name: str) -> asyncio.Lock:
        lock = batch.locks.get(name) or self._locks.get((batch.run_id, name))
        if lock is None:
            lock = asyncio.Lock()
            self._locks[(batch.run_id, name)] = lock
        batch.locks[name] = lock
        return lock

    def _limit_for(self, found: Tool) -> asyncio.Semaphore | None:
        if found.max_concurrency is None:
            return None
        limits = self._limits.setdefault(asyncio.get_running_loop(), {})
        limit = limits.get(found.name)
        if limit is None:
            limit = limits[found.name] = asyncio.Semaphore(found.max_concurrency)
        return limit


async def _release_after(
    worker: asyncio.Future[Any], held: list[asyncio.Lock | asyncio.Semaphore]
) -> None:
    try:
        await asyncio.wait([worker])
        if not worker.cancelled():
            worker.exception()  # retrieved: the call's result was reported already
    finally:
        for guard in reversed(held):
            guard.release()


async def _notify(callback: Callable[[Any], Any], value: Any) -> None:
    returned = callback(value)
    if inspect.isawaitable(returned):
        await returned


def _validated_arguments(call: ToolCallPart, found: Tool) -> dict[str, Any]:
    raw = dict(call.args) if call.args is not None else parse_arguments_lenient(call.arguments)
    if found.validator is None:
        return raw
    try:
        return found.validator(raw)
    except ValidationError as exc:
        raise ArgumentError(issues_from_validation_error(exc)) from None


def _state_for(found: Tool, states: MutableMapping[str, BaseModel]) -> BaseModel:
    assert found.state_type is not None
    state = states.get(found.name)
    if state is None:
        state = found.new_state()
    elif not isinstance(state, found.state_type):
        state = found.state_type.model_validate(state)
    assert state is not None
    states[found.name] = state
    return state


def _invalid(name: str, error: ArgumentError) -> ToolResult:
    issues = [{"path": i.path, "message": i.message} for i in error.issues]
    return ToolResult.fail(error.for_model(name), data={"issues": issues})


def _timed_out(name: str, timeout: float | None, still_running: bool) -> ToolResult:
    if still_running:  # a thread cannot be stopped: say so
        error = (
            f"tool {name!r} did not finish within {timeout:g} seconds; it is still running "
            "in the background and what it does may still happen"
        )
    else:
        error = f"tool {name!r} did not finish within {timeout:g} seconds and was stopped"
    return ToolResult.fail(
        error, output=f"Error: {error}. Try a smaller request or another approach."
    )


def _blocked(name: str, timeout: float, seconds: float) -> ToolResult:
    """A call that returned past its timeout without yielding blocked the event loop."""
    error = (
        f"tool {name!r} blocked the event loop for {seconds:.1f} seconds, past its timeout "
        f"of {timeout:g}, so the timeout could not stop it; its result was dropped "
        "(make it async, or let it run in a thread)"
    )
    return ToolResult.fail(error)


_ANSWERED = shared_fields_set(("call_id", "name", "content", "data", "is_error", "attachments"))
"""The fields a result message is built with (see `ToolExecutor._outcome`)."""


def _escaped(exc: BaseException) -> ToolResult:
    """A tool tried to end the process (``sys.exit``, an interrupt): only its call ends."""
    return ToolResult.fail(
        f"the tool raised {describe(exc)}; the call ended there and the process goes on"
    )
