"""Real model, task suite: ponder's thought modes and its peers on SmolLM2-135M, two servers.

The 22 tasks of `bench.real_model_tasks` (1–3 tool calls each, three need none), once
per runner, temperature 0, ``max_tokens`` 96, ``n_ctx`` 4096, on two servers over the
same model file: the stock llama-cpp-python server (``chatml-function-calling``, ponder's
``llamacpp:`` profile) and `ponder.testing.grammar_server` (``tool_choice`` obeyed through
a grammar, ponder's ``vllm:`` profile: a local server honouring the whole OpenAI tool
protocol, as vLLM's guided decoding does). ponder runs with up to 4 tool rounds, 2 rounds
per step, no ``sequential_thinking`` and no middle messages; the peers with their
defaults and up to 8 model requests. Columns: **correct** (every expected value in the
answer), **clean** (no ponder instruction sentence or markup in it), **both**, **result
lost** (a tool returned the expected value, the answer lacks it), model requests, prompt
tokens (as the server reported them), **cached** (prompt tokens the server's cache reused,
from its log), wall time, **prefix reuse** (the mean share of each request's prompt that
repeats the previous request's of the same run from its start), **overflows** (requests
refused for the window) and **errors** (runs that raised). Wall times depend on the
machine's load. Run with ``python -m bench.real_model_suite`` (``--help``); it appends
each runner's runs to a JSON-lines file and rewrites its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, table, write_section
from bench.real_model import lane_python
from bench.real_model_runs import TaskRun, run_peer_suite, run_ponder, through_proxy
from bench.real_model_tasks import TASKS, Task
from ponder.testing.llama_server import GrammarServer, LlamaServer

__all__ = ["RUNNERS", "SERVERS", "main", "section"]

TITLE = "## Real model task suite (SmolLM2-135M, two servers)"
SERVERS: dict[str, tuple[type[LlamaServer], str]] = {
    "stock": (LlamaServer, "llamacpp"),
    "grammar": (GrammarServer, "vllm"),
}
MODES = ("reasoning-required", "reasoning", "inline", "chat")
"""``reasoning-optional`` is ``inline`` under its bot name: the same requests."""
RUNNERS = [f"react/{m}" for m in MODES] + ["step-react/chat", "step-react/reasoning-required"]
RUNNERS += ["pydantic-ai", "openai-agents", "langgraph", "smolagents"]


def _runner(name: str, profile: str, tasks: Sequence[Task]) -> Callable[[Any, str], Any]:
    if "/" not in name:
        return lambda proxy, url: run_peer_suite(proxy, url, name, tasks)
    workflow, mode = name.split("/")
    chosen = None if mode == "default" else mode
    return lambda proxy, url: run_ponder(proxy, url, profile, workflow, chosen, tasks)


async def _measure(
    server_name: str, runners: Sequence[str], tasks: Sequence[Task], out: Path, python: Path
) -> None:
    kind, profile = SERVERS[server_name]
    with tempfile.TemporaryDirectory() as tmp:
        server = kind(Path(tmp) / "server.log", python=str(python), n_ctx=4096)
        server.start()
        try:
            for name in runners:
                # ponder's runs are kept task by task (a peer's process runs all its tasks)
                batches = [tasks] if "/" not in name else [[task] for task in tasks]
                for batch in batches:
                    start = time.monotonic()
                    runs = await _runs(server, _runner(name, profile, batch))
                    with out.open("a") as sink:
                        for run in runs:
                            row = {"server": server_name, "runner": name, **run.to_json()}
                            sink.write(json.dumps(row) + "\n")
                    took = time.monotonic() - start
                    ids = ",".join(t.id for t in batch)
                    print(f"{server_name} {name} {ids}: {took:.0f} s", file=sys.stderr, flush=True)
        finally:
            server.stop()


async def _runs(server: LlamaServer, runner: Callable[[Any, str], Any]) -> list[TaskRun]:
    try:
        found: list[TaskRun] = await through_proxy(server, runner)
    except RuntimeError as error:  # a peer that cannot run: a row saying so
        found = [TaskRun("*", "", False, False, False, 0.0, str(error)[:200])]
    return found


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def _summary(rows: list[dict[str, Any]]) -> list[Any]:
    n = len(rows)
    exchanges = [e for r in rows for e in r["exchanges"]]
    prompt = sum(e["usage"].get("prompt_tokens", 0) for e in exchanges)
    reused = sum(h for r in rows for h, _ in r["hits"])
    given = sum(h + m for r in rows for h, m in r["hits"])
    shares = [s for r in rows for s in r["prefix_shares"]]
    return [
        f"{sum(r['correct'] for r in rows)}/{n}",
        f"{sum(r['clean'] for r in rows)}/{n}",
        f"{sum(r['correct'] and r['clean'] for r in rows)}/{n}",
        sum(r["result_lost"] for r in rows),
        len(exchanges),
        prompt,
        _pct(reused, given),
        f"{sum(r['wall'] for r in rows):.0f} s",
        _pct(sum(shares), len(shares)),
        sum(e["status"] == 400 for e in exchanges),
        sum(bool(r["error"]) for r in rows),
    ]


HEADERS = [
    "server",
    "runner",
    "correct",
    "clean",
    "both",
    "result lost",
    "requests",
    "prompt tokens",
    "cached",
    "wall",
    "prefix reuse",
    "overflows",
    "errors",
]


def section(paths: Sequence[Path], ids: Collection[str] = (), note: str = "") -> str:
    """The Markdown section from the JSON-lines files at ``paths`` (tasks ``ids``, or all)."""
    lines = [line for path in paths for line in path.read_text().splitlines() if line.strip()]
    rows = [json.loads(line) for line in lines]
    rows = [r for r in rows if not ids or r["task"] in ids]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["server"], row["runner"]), []).append(row)
    order = {name: n for n, name in enumerate(RUNNERS)}
    keys = sorted(groups, key=lambda k: (k[0] != "stock", order.get(k[1], len(order)), k[1]))
    body = [[s, r, *_summary(groups[(s, r)])] for s, r in keys]
    intro = (__doc__ or "").split("\n", 1)[1].strip()
    scope = f"Tasks in this table: {', '.join(sorted(ids))}." if ids else "Every task."
    scope = f"{scope} {note}".strip()
    return f"{TITLE}\n\n{intro}\n\n{scope}\n\n{table(HEADERS, body)}"


def main(argv: Sequence[str] | None = None) -> None:
    """Measure the chosen servers and runners, then write the section."""
    parser = argparse.ArgumentParser(description="ponder and its peers on a real model")
    parser.add_argument("--servers", default="stock,grammar")
    parser.add_argument("--runners", default=",".join(RUNNERS))
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "real_model_suite.jsonl")
    parser.add_argument("--tasks", default="", help="task ids (default: all)")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="more runs to report")
    parser.add_argument("--note", default="", help="a paragraph on what was measured")
    args = parser.parse_args(argv)
    python = lane_python()
    ids = set(filter(None, args.tasks.split(",")))
    if not args.report_only:
        if python is None:
            raise SystemExit("the real-model venv is absent (`make test-models` builds it)")
        tasks = [t for t in TASKS if not ids or t.id in ids]
        for server in args.servers.split(","):
            asyncio.run(_measure(server, args.runners.split(","), tasks, args.out, python))
    found = section([args.out, *args.also], ids, args.note)
    print(found)
    write_section(found)


if __name__ == "__main__":
    main()
