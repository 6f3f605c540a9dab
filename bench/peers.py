"""Parallel tools, a failing tool, and checkpoint bytes per step: ponder against its peers.

One turn with 8 parallel calls to a sync ``add`` tool (median wall time of the whole
run), then a turn of three parallel calls whose middle one raises: does the run survive,
and are the two good results kept? Last, the bytes a SQLite checkpointer stores per step.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from typing import Any

from bench.agent import FINAL, StepModel, add_tool
from bench.common import run_peer, table
from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.tools import tool

__all__ = ["FANOUT", "fail_tool", "ponder_failure", "ponder_parallel", "run"]

FANOUT = 8
REPEAT = 21

PEERS = [
    ("LangGraph `create_react_agent`", "langgraph_peer.py"),
    ("pydantic-ai", "pydantic_ai_peer.py"),
    ("OpenAI Agents", "openai_agents_peer.py"),
    ("smolagents `ToolCallingAgent`", "smolagents_peer.py"),
    ("amrita-core (ReAct)", "amrita_peer.py"),
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


def _peer(script: str, mode: str) -> dict[str, Any]:
    try:
        found: dict[str, Any] = run_peer(script, mode)
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
        ]
    )
