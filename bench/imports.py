"""Cold import time: ``import ponder`` and the agent API against the peers' imports.

Each statement runs in a fresh interpreter, timed inside it (one warm-up run, then 7
rounds in turn, the median of each). ponder's statements and the ``import asyncio,
pydantic`` baseline run in one process in turn; the peers' in the peer environment.
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.common import ROOT, run_peer, table

__all__ = ["BASELINE", "PEERS", "PONDER", "run"]

BASELINE = "import asyncio, pydantic"
FIRST_AGENT = (
    "from ponder.agent import Agent\n"
    "from ponder.models import ScriptedModel\n"
    "from ponder.tools import tool\n"
    "def add(a: int, b: int) -> int:\n"
    "    '''Add two integers.'''\n"
    "    return a + b\n"
    "Agent(ScriptedModel(['done']), tools=[tool(add)])"
)
PONDER = [
    ("import ponder", "`import ponder`"),
    ("from ponder.agent import Agent", "`from ponder.agent import Agent`"),
    (FIRST_AGENT, "`from ponder.agent import Agent` + the first `Agent(model, tools=[add])`"),
]
PEERS = [
    ("from langgraph.prebuilt import create_react_agent", "LangGraph (`langgraph.prebuilt`)"),
    ("from pydantic_ai import Agent", "pydantic-ai (`from pydantic_ai import Agent`)"),
    ("from agents import Agent", "OpenAI Agents (`from agents import Agent`)"),
    ("from smolagents import ToolCallingAgent", "smolagents"),
    ("import amrita_core", "amrita-core"),
    ("import amrita_sense", "amrita-sense"),
    ("from agno.agent import Agent", "Agno (`from agno.agent import Agent`)"),
]
TIMER = ROOT / "bench" / "peers" / "import_timer.py"


def _ponder_imports() -> dict[str, float | str]:
    proc = subprocess.run(
        [sys.executable, str(TIMER), BASELINE, *(s for s, _ in PONDER)],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    found: dict[str, float | str] = json.loads(proc.stdout.strip().splitlines()[-1])["imports"]
    return found


def _cell(value: float | str, base: float, baseline: float) -> list[str]:
    if isinstance(value, str):
        return [f"failed: {value[:80]}", "—", "—"]
    return [f"{value * 1e3:.0f} ms", f"{value / base:.1f}×", f"{value / baseline:.1f}×"]


def run() -> str:
    """The cold-import section."""
    ours = _ponder_imports()
    theirs = run_peer("import_timer.py", *(s for s, _ in PEERS))["imports"]
    base, baseline = ours[PONDER[1][0]], ours[BASELINE]
    if isinstance(base, str) or isinstance(baseline, str):
        raise RuntimeError(f"the ponder imports failed: {base} {baseline}")
    rows = [[f"`{BASELINE}` (baseline)", *_cell(baseline, base, baseline)]]
    rows += [[label, *_cell(ours[s], base, baseline)] for s, label in PONDER]
    rows += [[label, *_cell(theirs[s], base, baseline)] for s, label in PEERS]
    headers = ["Import", "Median", "vs ponder.agent", "vs `import asyncio, pydantic`"]
    return "\n".join(
        [
            "## Cold import time",
            "",
            "Each import in a fresh interpreter, timed inside it (`time.perf_counter` around "
            "the statement); one warm-up run, then 7 rounds in turn, the median of each. "
            "`from ponder.agent import Agent` loads the agent's module alone; building the "
            "first agent loads the runtime (its row times both).",
            "",
            f"`from ponder.agent import Agent` against `{BASELINE}` in the same run: "
            f"**{base / baseline:.2f}×** ({base * 1e3:.0f} ms against {baseline * 1e3:.0f} ms).",
            "",
            table(headers, rows),
        ]
    )
