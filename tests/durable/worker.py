"""A deterministic agent run for the durability tests, meant to be run as a subprocess.

    python -m tests.durable.worker STORE_URL RUN_ID LOG_PATH start|resume [CRASH_AT] [VALUE]

``CRASH_AT=n`` kills the process with SIGKILL right after the n-th durable write
(checkpoint or tool effect); ``CRASH_AT=0`` right after the lease is taken. Tools append
``call_id`` to LOG_PATH when they run. Prints the run's result as one JSON line.
``REUSED_IDS=1`` runs a model that reuses one call id in every round (tools then log their
argument instead).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from ponder.agent import Agent
from ponder.messages import ToolMessage, messages_to_json
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import Checkpoint, Store, open_store
from ponder.tools import ToolContext, tool

STEPS = 3


class CrashingStore(Store):
    """Delegates to a real store; dies after the n-th write."""

    def __init__(self, inner: Store, crash_at: int | None) -> None:
        self.inner, self.crash_at, self.writes = inner, crash_at, 0

    def _tick(self) -> None:
        self.writes += 1
        if self.crash_at is not None and self.writes == self.crash_at:
            os.kill(os.getpid(), signal.SIGKILL)

    async def write(self, checkpoint: Checkpoint) -> int:
        size = await self.inner.write(checkpoint)
        self._tick()
        return size

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        size = await self.inner.write_effect(run_id, call_id, message)
        self._tick()
        return size

    async def load(self, run_id: str) -> Any:
        return await self.inner.load(run_id)

    async def list_runs(self, *, status: str | None = None, limit: int = 100) -> Any:
        return await self.inner.list_runs(status=status, limit=limit)

    async def latest_in_session(self, session_id: str) -> str | None:
        return await self.inner.latest_in_session(session_id)

    async def latest_turn(self, session_id: str) -> Any:
        return await self.inner.latest_turn(session_id)

    async def set_status(self, run_id: str, status: str) -> None:
        await self.inner.set_status(run_id, status)

    async def delete(self, run_id: str) -> None:
        await self.inner.delete(run_id)

    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        await self.inner.acquire(run_id, owner, ttl, takeover=takeover)
        if self.crash_at == 0:  # between the lease row and the first checkpoint
            os.kill(os.getpid(), signal.SIGKILL)

    async def release(self, run_id: str, owner: str) -> None:
        await self.inner.release(run_id, owner)

    async def acquire_session(
        self, session_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        await self.inner.acquire_session(session_id, owner, ttl, takeover=takeover)

    async def release_session(self, session_id: str, owner: str) -> None:
        await self.inner.release_session(session_id, owner)


def reused_script(request: ModelRequest) -> ModelResponse:
    """Every call of every round is ``call_0``; round three calls twice in one response."""
    done = sum(isinstance(m, ToolMessage) for m in request.messages)
    if done == 0:
        return call_tools(("measure", {"item": "a0"}, "call_0"))
    if done == 1:
        return call_tools(("publish", {"text": "report"}, "call_0"))
    if done == 2:
        return call_tools(
            ("measure", {"item": "a2"}, "call_0"), ("measure", {"item": "bb2"}, "call_0")
        )
    if done == 4:
        return call_tools(("agent_stop", {"result": "measured"}, "call_0"))
    return reply("measured everything")


def log_entry(call_id: str, argument: str) -> str:
    """What a tool logs: its call id, or its argument when ids are reused."""
    return argument if os.environ.get("REUSED_IDS") else call_id


def script(request: ModelRequest) -> ModelResponse:
    if os.environ.get("REUSED_IDS"):
        return reused_script(request)
    results = [m for m in request.messages if isinstance(m, ToolMessage)]
    if os.environ.get("INTERRUPT_TEST") and not results:
        return call_tools(("slow_write", {"text": "x"}, "s1"), ("measure", {"item": "quick"}, "q1"))
    if os.environ.get("INTERRUPT_TEST") and len(results) == 2:
        return call_tools(("agent_stop", {}, "stop"))
    if os.environ.get("INTERRUPT_TEST"):
        return reply("done")
    step = len(results) // 2
    if step < STEPS:
        return call_tools(
            ("measure", {"item": f"a{step}"}, f"m{step}a"),
            ("measure", {"item": f"bb{step}"}, f"m{step}b"),
        )
    if os.environ.get("WITH_PUBLISH") and not any(r.name == "publish" for r in results):
        return call_tools(("publish", {"text": "report"}, "p1"))
    if not any(r.name == "agent_stop" for r in results):
        return call_tools(("agent_stop", {"result": "measured"}, "stop"))
    return reply("measured everything")


def build(log_path: str) -> Agent:
    @tool(idempotent=True)
    async def measure(ctx: ToolContext, item: str) -> str:
        """Measure an item.

        Args:
            item: What to measure.
        """
        with open(log_path, "a") as log:
            log.write(log_entry(ctx.call_id, item) + "\n")
        return f"{item}: {len(item)}"

    @tool(requires_approval=True)
    async def publish(ctx: ToolContext, text: str) -> str:
        """Publish a text.

        Args:
            text: The text.
        """
        with open(log_path, "a") as log:
            log.write(log_entry(ctx.call_id, text) + "\n")
        return f"published {text!r}"

    @tool
    async def slow_write(ctx: ToolContext, text: str) -> str:
        """Write slowly (not idempotent).

        Args:
            text: The text.
        """
        with open(log_path, "a") as log:
            log.write(ctx.call_id + "\n")
        await asyncio.sleep(float(os.environ.get("SLOW_SECONDS", "0.5")))
        return "written"

    return Agent(
        ScriptedModel(script),
        tools=[measure, publish, slow_write],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


async def main(url: str, run_id: str, log_path: str, mode: str, crash: str, value: str) -> None:
    store = CrashingStore(open_store(url), int(crash) if crash else None)
    agent = build(log_path)
    if mode == "start":
        result = await agent.run("measure things", run_id=run_id, store=store)
    else:
        result = await agent.resume(run_id, json.loads(value) if value else None, store=store)
    await store.inner.close()
    print(
        json.dumps(
            {
                "status": result.status,
                "output": result.output,
                "writes": store.writes,
                "suspension": result.suspension,
                "messages": messages_to_json(result.messages),
            }
        )
    )


if __name__ == "__main__":
    args = [*sys.argv[1:], "", ""]
    asyncio.run(main(args[0], args[1], args[2], args[3], args[4], args[5]))
