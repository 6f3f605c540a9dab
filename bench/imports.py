"""Cold import time: ``import ponder`` and the agent API against the peers' imports.

Each module is imported in a fresh interpreter (one discarded run, then the median of
7); the peers' modules are timed the same way inside the peer environment.
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.common import ROOT, run_peer, table

__all__ = ["PEERS", "PONDER", "run"]

PONDER = [("ponder", "`import ponder`"), ("ponder.agent", "`from ponder.agent import Agent`")]
PEERS = [
    ("langgraph.prebuilt", "LangGraph (`langgraph.prebuilt`)"),
    ("pydantic_ai", "pydantic-ai (`pydantic_ai`)"),
    ("agents", "OpenAI Agents (`agents`)"),
    ("smolagents", "smolagents"),
    ("amrita_core", "amrita-core"),
    ("amrita_sense", "amrita-sense"),
]
TIMER = ROOT / "bench" / "peers" / "import_timer.py"


def _ponder_imports() -> dict[str, float | str]:
    proc = subprocess.run(
        [sys.executable, str(TIMER), *(m for m, _ in PONDER)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    found: dict[str, float | str] = json.loads(proc.stdout.strip().splitlines()[-1])["imports"]
    return found


def _cell(value: float | str, base: float) -> list[str]:
    if isinstance(value, str):
        return [f"failed: {value[:80]}", "—"]
    return [f"{value * 1e3:.0f} ms", f"{value / base:.1f}×"]


def run() -> str:
    """The cold-import section."""
    ours = _ponder_imports()
    theirs = run_peer("import_timer.py", *(m for m, _ in PEERS))["imports"]
    base = ours["ponder.agent"]
    if isinstance(base, str):
        raise RuntimeError(f"import ponder.agent failed: {base}")
    rows = [[label, *_cell(ours[m], base)] for m, label in PONDER]
    rows += [[label, *_cell(theirs[m], base)] for m, label in PEERS]
    return "\n".join(
        [
            "## Cold import time",
            "",
            "Each import in a fresh interpreter, timed inside it (`time.perf_counter` around "
            "the import statement); one discarded run, then the median of 7. Ratios are "
            "against `from ponder.agent import Agent` (what building an agent needs).",
            "",
            table(["Import", "Median", "vs ponder.agent"], rows),
        ]
    )
