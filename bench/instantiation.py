"""Agent instantiation: time and memory per agent built with one ``add`` tool.

``Agent(model, tools=[add])`` for ponder and ``instantiate`` in each peer script (the
peer's own way of making an agent with that tool, its model built once). Batches of about
0.2 s, median of 7; memory: tracemalloc growth with 200 agents kept alive, divided by 200.
ponder is measured before and after the peers, and the two medians averaged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.agent import StepModel, add
from bench.common import instantiation, run_peer, table
from ponder.agent import Agent
from ponder.tools import tool

__all__ = ["PEERS", "ponder_instantiation", "run"]

PEERS = [
    ("Agno `Agent` (plain function)", "agno_peer.py"),
    ("pydantic-ai `Agent` + `FunctionModel` (plain function)", "pydantic_ai_peer.py"),
    ("OpenAI Agents `Agent` (`function_tool` built once)", "openai_agents_peer.py"),
    ("smolagents `ToolCallingAgent` (`@tool`)", "smolagents_peer.py"),
    ("LangGraph `create_react_agent` (compiles a graph)", "langgraph_peer.py"),
]


def _makers() -> list[tuple[str, Callable[[], Any]]]:
    model, decorated = StepModel(0), tool(add)
    return [
        ("ponder `Agent` (`@tool` function)", lambda: Agent(model, tools=[decorated])),
        ("ponder `Agent` (plain function)", lambda: Agent(model, tools=[add])),
    ]


def ponder_instantiation() -> dict[str, dict[str, float]]:
    """Seconds and bytes per ponder agent, for each way of giving the tool."""
    return {label: instantiation(make) for label, make in _makers()}


def _peer(script: str) -> dict[str, Any]:
    try:
        found: dict[str, Any] = run_peer(script, "instantiate")
    except (RuntimeError, OSError) as exc:
        return {"not_measured": str(exc).strip().splitlines()[-1][:160]}
    return found


def _row(label: str, found: dict[str, Any], base: dict[str, float]) -> list[str]:
    if "seconds" not in found:
        return [label, f"not measured: {found.get('not_measured')}", "—", "—", "—"]
    seconds, size = found["seconds"], found["bytes"]
    return [
        label,
        f"{seconds * 1e6:.1f} µs",
        f"{seconds / base['seconds']:.1f}×",
        f"{size / 1024:.2f} KiB",
        f"{size / base['bytes']:.1f}×",
    ]


def _averaged(*runs: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        label: {key: sum(r[label][key] for r in runs) / len(runs) for key in runs[0][label]}
        for label in runs[0]
    }


def run() -> str:
    """The agent-instantiation section."""
    first = ponder_instantiation()
    theirs = [(label, _peer(script)) for label, script in PEERS]
    ours = _averaged(first, ponder_instantiation())
    base = next(iter(ours.values()))
    rows = [_row(label, found, base) for label, found in ours.items()]
    rows += [_row(label, found, base) for label, found in theirs]
    headers = ["Runtime", "Time per agent", "vs ponder", "Memory per agent", "vs ponder"]
    return "\n".join(
        [
            "## Agent instantiation",
            "",
            "One agent with one `add(a, b)` tool and a zero-latency fake model (built once), as "
            "each runtime makes it. Batches of about 0.2 s after warm-up builds, median of 7; "
            "memory: tracemalloc growth while 200 agents stay alive, per agent. ponder is "
            "measured before and after the peers (the two averaged); ratios against its first "
            "row.",
            "",
            table(headers, rows),
        ]
    )
