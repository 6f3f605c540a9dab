"""Parallel tools, a failing tool, and checkpoint bytes per step: ponder against its peers.

One turn with 8 parallel calls to a sync ``add`` tool (median wall time of the whole
run), then a turn of three parallel calls whose middle one raises: does the run survive,
and are the two good results kept? Last, the bytes a SQLite checkpointer stores per step.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.agent import FINAL, STEPS, StepModel, add_tool, check, ponder_agent
from bench.common import run_peer, table
from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.store import Checkpoint, SQLiteStore
from ponder.tools import tool

__all__ = [
    "FANOUT",
    "CountingStore",
    "fail_tool",
    "ponder_checkpoint_bytes",
    "ponder_failure",
    "ponder_parallel",
    "run",
]

FANOUT = 8
REPEAT = 21

PEERS = [
    ("LangGraph `create_react_agent`", "langgraph_peer.py"),
    ("pydantic-ai", "pydantic_ai_peer.py"),
    ("OpenAI Agents", "openai_agents_peer.py"),
    ("smolagents `ToolCallingAgent`", "smolagents_peer.py"),
    ("amrita-core (ReAct)", "amrita_peer.py"),
    ("Agno `Agent`", "agno_peer.py"),
]


def fail_tool(a: int, b: int) -> int:
    """Add two integers (this one always fails)."""
    raise ValueError("boom")


def _agent(names: list[str]) -> Agent:
    tools = [add_tool(), tool(fail_tool)]
    return Agent(
        StepModel(0, fanout=names),
        tools=tools,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_middle_message=False,
    )


def ponder_parallel() -> float:
    """Median wall time of one ponder run whose first turn makes 8 parallel calls."""
    agent = _agent(["add"] * FANOUT)
    loop = asyncio.new_event_loop()
    try:
        for _ in range(2):
            loop.run_until_complete(agent.run("count"))
        times = []
        for _ in range(REPEAT):
            gc.collect()
            start = time.perf_counter()
            result = loop.run_until_complete(agent.run("count"))
            times.append(time.perf_counter() - start)
            if result.output != FINAL or result.tool_calls != FANOUT:
                raise RuntimeError(f"parallel run ended wrongly: {result.stop_reason}")
    finally:
        loop.close()
    return statistics.median(times)


def ponder_failure() -> dict[str, Any]:
    """Three parallel calls, the middle one raising: what ponder's run keeps."""
    try:
        result = asyncio.run(_agent(["add", "fail_tool", "add"]).run("count"))
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"}
    results = [m for m in result.messages if isinstance(m, ToolMessage) and m.name != "agent_stop"]
    kept = sum(not m.is_error for m in results)
    return {"survived": True, "kept": kept, "detail": "; ".join(m.content[:50] for m in results)}


class CountingStore(SQLiteStore):
    """`SQLiteStore` that adds up the bytes each write reports."""

    written = 0

    async def write(self, checkpoint: Checkpoint) -> int:
        """Write and count."""
        size = await super().write(checkpoint)
        self.written += size
        return size

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Write and count."""
        size = await super().write_effect(run_id, call_id, message)
        self.written += size
        return size


def ponder_checkpoint_bytes(k: int) -> tuple[int, int]:
    """(bytes written, bytes stored) by ponder's SQLite store for one run of K steps."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.db"
        store = CountingStore(path)
        check(asyncio.run(ponder_agent(k, store=store).run("count")), k)
        with sqlite3.connect(path) as db:
            (stored,) = db.execute(
                "SELECT (SELECT COALESCE(SUM(LENGTH(header)), 0) FROM ponder_runs)"
                " + (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM ponder_messages)"
                " + (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM ponder_effects)"
            ).fetchone()
        asyncio.run(store.close())
    return store.written, int(stored)


def _checkpoint_section() -> str:
    ours = {k: ponder_checkpoint_bytes(k) for k in STEPS}
    theirs = _peer("langgraph_peer.py", "checkpoint", *map(str, STEPS)).get("bytes", {})
    rows = []
    for k in STEPS:
        written, stored = ours[k]
        peer = theirs.get(str(k))
        cells = [f"{k}", f"{written / 1024:,.1f} KB ({written / k:,.0f} B/step)"]
        cells.append(f"{stored / 1024:,.1f} KB")
        if peer is None:
            cells += ["not measured", "—"]
        else:
            size = peer["bytes"]
            cells += [f"{size / 1024:,.1f} KB ({size / k:,.0f} B/step)", f"{size / written:.1f}×"]
        rows.append(cells)
    headers = [
        "K",
        "ponder `SQLiteStore`: bytes written",
        "ponder: stored at the end",
        "LangGraph `AsyncSqliteSaver`: stored",
        "LangGraph / ponder",
    ]
    return "\n".join(
        [
            "## Checkpoint bytes",
            "",
            "One run of K `add` steps with a SQLite checkpointer. ponder: the bytes its store "
            "reports writing (run header rewrites, appended messages, tool effects) and the "
            "bytes stored at the end; LangGraph: the bytes of all rows in its `checkpoints` "
            "and `writes` tables (it keeps every checkpoint, so stored = written).",
            "",
            table(headers, rows),
        ]
    )


def _peer(script: str, mode: str, *args: str) -> dict[str, Any]:
    try:
        found: dict[str, Any] = run_peer(script, mode, *args)
    except (RuntimeError, OSError) as exc:
        return {"not_measured": str(exc).strip().splitlines()[-1][:160]}
    return found


def _fanout_section() -> str:
    base = ponder_parallel()
    rows = [["ponder ReAct (chat mode)", f"{base * 1e3:.2f} ms", "1.0×"]]
    for label, script in PEERS:
        found = _peer(script, "parallel")
        if "median" in found:
            rows.append(
                [label, f"{found['median'] * 1e3:.2f} ms", f"{found['median'] / base:.1f}×"]
            )
        else:
            rows.append([label, f"not measured: {found.get('not_measured')}", "—"])
    return table(
        ["Runtime", f"One turn, {FANOUT} parallel `add` calls (whole run)", "vs ponder"], rows
    )


def _failure_section() -> str:
    rows = []
    for label, found in [("ponder ReAct (chat mode)", ponder_failure())] + [
        (label, _peer(script, "failure")) for label, script in PEERS
    ]:
        if "not_measured" in found:
            rows.append([label, "not measured", "—", found["not_measured"]])
            continue
        detail = str(found.get("detail", "")).replace("\n", " ").replace("|", "/")[:110]
        survived = "yes" if found["survived"] else "no (the run raises)"
        rows.append([label, survived, f"{found['kept']} of 2", detail])
    return table(
        ["Runtime", "Run survives", "Good results kept", "What the model sees / error"], rows
    )


def run() -> str:
    """The parallel-tools and failing-tool section."""
    return "\n".join(
        [
            "## Parallel tools and a failing tool",
            "",
            f"One run whose first turn calls `add` {FANOUT} times in parallel, then ends "
            f"(median of {REPEAT} after 2 warm-ups; ponder adds its `agent_stop` request, "
            "amrita-core its tool-less round and answer completion).",
            "",
            _fanout_section(),
            "",
            "Three parallel calls, the middle one raising `ValueError`; each runtime with its "
            "default error handling.",
            "",
            _failure_section(),
            "",
            _checkpoint_section(),
        ]
    )
