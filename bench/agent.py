"""Agent per-step overhead: K sequential tool steps for ponder and its peers.

Every runtime gets a zero-latency, history-driven fake model that looks only at the last
few messages: the ``add`` tool returns the number of steps done so far (the fake always
calls ``add(a=<last result>, b=1)``), so the next action costs O(1) to decide and the fake
is stateless and reusable. A run is K calls to ``add`` and a final answer; ponder's ReAct
loop adds one ``agent_stop`` request (its explicit stop tool) before the answer, so a
ponder run is K + 2 model requests against the peers' K + 1.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import run_peer, table
from ponder.agent import Agent, RunResult
from ponder.messages import Message, TextPart, ToolCallPart, ToolMessage, UserMessage
from ponder.models.base import ForceTool, ModelRequest, ModelResponse, StreamEvent
from ponder.store import SQLiteStore, Store
from ponder.tools import Tool, tool

__all__ = [
    "STEPS",
    "StepModel",
    "add",
    "peer_rows",
    "ponder_agent",
    "ponder_step_medians",
    "run",
    "steps_done",
]

STEPS = (20, 80, 160)
REPEAT = 7
FINAL = "done"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def steps_done(messages: Sequence[Message]) -> int:
    """The number of ``add`` results so far, read from the latest one (O(1))."""
    for message in reversed(messages[-4:]):
        if isinstance(message, ToolMessage) and message.name == "add":
            return int(message.content)
        if isinstance(message, UserMessage):
            return 0
    return 0


class StepModel:
    """A zero-latency (or fixed-latency) fake that runs ``steps`` add calls, then stops."""

    def __init__(
        self,
        steps: int,
        *,
        latency: float = 0.0,
        gate: asyncio.Event | None = None,
        fanout: Sequence[str] = (),
    ):
        self.steps = steps
        self.latency = latency
        self.gate = gate
        self.fanout = tuple(fanout)

    @property
    def name(self) -> str:
        """The fake's name."""
        return "bench:steps"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Decide the next action from the tail of the history."""
        if self.gate is not None:
            await self.gate.wait()
        if self.latency:
            await asyncio.sleep(self.latency)
        return self.decide(request)

    async def stream(self, request: ModelRequest) -> Any:
        """The same response, as a one-item stream."""
        response: StreamEvent = await self.request(request)
        yield response

    def decide(self, request: ModelRequest) -> ModelResponse:
        """The response for ``request``: think, add, stop or answer."""
        messages = request.messages
        last = messages[-1]
        if request.tool_choice == "none" or (
            isinstance(last, ToolMessage) and last.name == "agent_stop"
        ):
            return ModelResponse(parts=(TextPart(text=FINAL),), finish_reason="stop")
        if self.fanout:
            return self._fan_out(last)
        done = steps_done(messages)
        if isinstance(request.tool_choice, ForceTool):
            args: dict[str, Any] = {"summary": f"step {done + 1}", "last_step": str(done)}
            return _call(f"t{done}", request.tool_choice.name, args)
        if done >= self.steps:
            return _call("stop", "agent_stop", {"result": str(done)})
        return _call(f"c{done}", "add", {"a": done, "b": 1})

    def _fan_out(self, last: Message) -> ModelResponse:
        if isinstance(last, ToolMessage):
            return _call("stop", "agent_stop", {"result": "fan-out done"})
        parts = tuple(
            ToolCallPart.from_args(f"c{i}", name, {"a": i, "b": 1})
            for i, name in enumerate(self.fanout)
        )
        return ModelResponse(parts=parts, finish_reason="tool_calls")


def _call(call_id: str, name: str, args: dict[str, Any]) -> ModelResponse:
    part = ToolCallPart.from_args(call_id, name, args)
    return ModelResponse(parts=(part,), finish_reason="tool_calls")


def add_tool(*, thread: bool = True) -> Tool:
    """``add`` as a ponder tool (sync; run in a worker thread unless ``thread`` is False)."""
    return tool(add) if thread else tool(run_in_thread=False)(add)


def ponder_agent(
    steps: int,
    *,
    mode: str = "chat",
    thread: bool = True,
    model: StepModel | None = None,
    store: Store | None = None,
    **extra: Any,
) -> Agent:
    """An agent that performs ``steps`` add calls per run against `StepModel`."""
    return Agent(
        model or StepModel(steps, **extra),
        store=store,
        tools=[add_tool(thread=thread)],
        agent_thought_mode=mode,
        enable_thinking_tool=False,
        agent_tool_call_limit=100_000,
        agent_middle_message=False,
        context_strategy="none",
    )


def check(result: RunResult, steps: int) -> None:
    """Fail loudly if a run did not do exactly ``steps`` add calls and answer."""
    if result.output != FINAL or steps_done(result.messages[:-3]) != steps:
        raise RuntimeError(f"run ended wrongly: {result.stop_reason} {result.output!r}")


def ponder_step_medians(
    steps: Sequence[int] = STEPS, *, repeat: int = REPEAT, **options: Any
) -> dict[int, float]:
    """Median run time of ponder for each K, on one event loop."""
    loop = asyncio.new_event_loop()
    medians: dict[int, float] = {}
    folder = tempfile.TemporaryDirectory()
    if options.get("store") == "sqlite":
        options = {**options, "store": SQLiteStore(Path(folder.name) / "runs.db")}
    try:
        for k in steps:
            agent = ponder_agent(k, **options)
            for _ in range(2):
                check(loop.run_until_complete(agent.run("count")), k)
            times = []
            for _ in range(repeat):
                gc.collect()
                start = time.perf_counter()
                loop.run_until_complete(agent.run("count"))
                times.append(time.perf_counter() - start)
            medians[k] = statistics.median(times)
    finally:
        loop.close()
        folder.cleanup()
    return medians


PONDER_ROWS: list[tuple[str, dict[str, Any]]] = [
    ("ponder ReAct, chat mode (tool in a thread)", {}),
    ("ponder ReAct, chat mode, `run_in_thread=False`", {"thread": False}),
    ("ponder ReAct, reasoning-required (2 requests/step)", {"mode": "reasoning-required"}),
    ("ponder ReAct, chat mode + `SQLiteStore` (file)", {"store": "sqlite"}),
]

PEERS: list[tuple[str, str, tuple[str, ...]]] = [
    ("LangGraph `create_react_agent`", "langgraph_peer.py", ()),
    ("LangGraph `create_react_agent` + `AsyncSqliteSaver`", "langgraph_peer.py", ("sqlite",)),
    ("pydantic-ai `Agent` + `FunctionModel`", "pydantic_ai_peer.py", ()),
    ("OpenAI Agents `Runner` + custom `Model`", "openai_agents_peer.py", ()),
    ("smolagents `ToolCallingAgent`", "smolagents_peer.py", ()),
    ("amrita-core `AgentRuntime` (ReAct)", "amrita_peer.py", ()),
    ("Agno `Agent` + custom `Model`", "agno_peer.py", ()),
]


def peer_rows(steps: Sequence[int] = STEPS) -> list[tuple[str, dict[int, float] | str]]:
    """Median run times of every peer, or the reason it was not measured."""
    rows: list[tuple[str, dict[int, float] | str]] = []
    for label, script, args in PEERS:
        try:
            found = run_peer(script, "steps", *args, *map(str, steps))
        except (RuntimeError, OSError) as exc:
            rows.append((label, f"failed: {str(exc).strip().splitlines()[-1][:160]}"))
            continue
        if "not_measured" in found:
            rows.append((label, f"not measured: {found['not_measured']}"))
        else:
            rows.append((label, {int(k): float(v) for k, v in found["medians"].items()}))
    return rows


def _cells(medians: dict[int, float], steps: Sequence[int], base: dict[int, float]) -> list[str]:
    cells = [f"{medians[k] * 1e3:.1f} ms ({medians[k] / k * 1e3:.3f})" for k in steps]
    lo, hi = steps[-2], steps[-1]
    cells.append(f"{(medians[hi] - medians[lo]) / (hi - lo) * 1e3:.3f}")
    cells.append(f"{medians[hi] / base[hi]:.1f}×")
    return cells


def environment_line() -> str:
    """CPU count, load average and the peer packages' versions, for the results."""
    versions = run_peer("versions.py")["versions"]
    peers = ", ".join(f"{name} {found}" for name, found in versions.items())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, load average {load} at the start. Peers: {peers}."


def run() -> str:
    """The per-step overhead section."""
    environment = environment_line()
    ponder_rows = [(label, ponder_step_medians(**opts)) for label, opts in PONDER_ROWS]
    base = ponder_rows[0][1]
    headers = ["Runtime", *(f"K={k}" for k in STEPS)]
    headers += [f"Marginal ms/step, K {STEPS[-2]}→{STEPS[-1]}", f"vs ponder at K={STEPS[-1]}"]
    rows: list[list[str]] = [[label, *_cells(m, STEPS, base)] for label, m in ponder_rows]
    notes: list[str] = []
    for label, found in peer_rows():
        if isinstance(found, str):
            rows.append([label, *["—"] * (len(STEPS) + 2)])
            notes.append(f"- {label}: {found}")
        else:
            rows.append([label, *_cells(found, STEPS, base)])
    return "\n".join(
        [
            "## Agent per-step overhead",
            "",
            "K sequential steps, each one model call emitting one call to a sync `add(a, b)` "
            "tool, then a final answer. Zero-latency history-driven fake model per runtime "
            "(it reads only the last few messages), tracing and logging off, 2 warm-ups, "
            f"`gc.collect()` before each timed run, median of {REPEAT}. Cells: median run "
            "time (average ms per step). ponder's ReAct loop makes K + 2 model requests "
            "(its explicit `agent_stop` call, then the answer), and so does amrita-core (a "
            "round without tool calls ends its loop, then a separate answer completion); "
            "the other peers make K + 1. The ratio column divides by ponder's first row.",
            "",
            environment,
            "",
            table(headers, rows),
            *(["", *notes] if notes else []),
        ]
    )
