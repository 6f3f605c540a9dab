"""Fault injection: runs killed with SIGKILL at random durable writes, then resumed; and
malformed provider responses met by real runs.

For each store, ``TRIALS`` runs of the durability worker (``tests/durable/worker.py``: six
idempotent measurements, an approval-free stop) are killed right after a random durable
write, chosen among every write the uninterrupted run makes, and resumed in a new process.
Goals: every run resumed to completion, no completed call lost from the final ledger, no
call run twice.

The fuzz (``tests/support/fuzz.py``) sends ``FUZZ_RESPONSES`` malformed responses, a seeded
mix of odd shapes and mutations of valid ones, through the fake OpenAI and Anthropic servers
to real runs with a SQLite store. Goals: no untyped exception, no run left running or
holding its lease, no hang. ``python -m bench.faults`` rewrites only the fuzz section.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import PG_DSN, ROOT, postgres_up, table, write_section

__all__ = ["run"]

TRIALS = 20
FUZZ_RESPONSES = 1000
FUZZ_SEED = 20261201
FUZZ_TITLE = "## Faults: malformed provider responses met by real runs"
EXPECTED = ["m0a", "m0b", "m1a", "m1b", "m2a", "m2b"]


def _worker(url: str, run_id: str, log: Path, mode: str, crash: int | None) -> dict[str, Any]:
    args = [sys.executable, "-m", "tests.durable.worker", url, run_id, str(log), mode]
    args += ["" if crash is None else str(crash), ""]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if proc.returncode == -9:
        return {"killed": True}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _trials(url: str, folder: Path) -> list[Any]:
    reference = _worker(url, f"ref-{uuid.uuid4().hex}", folder / "ref.log", "start", None)
    rng = random.Random(20261201)
    resumed = lost = duplicated = 0
    for index in range(TRIALS):
        run_id, log = f"fault-{uuid.uuid4().hex}", folder / f"{index}.log"
        crash = rng.randrange(1, reference["writes"])
        killed = _worker(url, run_id, log, "start", crash)
        result = _worker(url, run_id, log, "resume", None)
        resumed += killed.get("killed", False) and result.get("status") == "completed"
        ran = Counter(log.read_text().split()) if log.exists() else Counter()
        answered = {m.get("call_id") for m in result.get("messages", ()) if m["kind"] == "tool"}
        lost += sum(1 for call in EXPECTED if call not in answered)
        duplicated += sum(n - 1 for n in ran.values() if n > 1)
    return [TRIALS, resumed, lost, duplicated]


def run() -> str:
    """Both sections: the kills, then the fuzz."""
    return kill_section() + "\n\n" + fuzz_section()


def kill_section() -> str:
    """Per store: runs killed, resumed to completion, calls lost, duplicated."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sqlite, postgres = Path(tmp) / "sqlite", Path(tmp) / "postgres"
        sqlite.mkdir()
        rows.append(["SQLite", *_trials(f"sqlite:///{sqlite / 'runs.sqlite3'}", sqlite)])
        if postgres_up():
            postgres.mkdir()
            rows.append(["PostgreSQL", *_trials(PG_DSN, postgres)])
    headers = ["store", "runs killed", "resumed to completion", "calls lost", "calls duplicated"]
    return (
        "## Faults: SIGKILL at random durable writes, then resume\n\n"
        "Each run is killed right after a random durable write (checkpoint or tool result) "
        "and resumed in a new process. Goals: all resumed, 0 lost, 0 duplicated.\n\n"
        + table(headers, rows)
    )


def fuzz_section() -> str:
    """Per provider and mode: runs completed, typed errors, untyped, left running, hung."""
    from tests.support.fuzz import fuzz_runs

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        tallies = asyncio.run(fuzz_runs(FUZZ_SEED, FUZZ_RESPONSES, Path(tmp)))
        seconds = time.perf_counter() - start
    rows = [
        [
            t.lane,
            t.runs,
            t.completed,
            sum(t.typed_errors.values()),
            len(t.untyped),
            len(t.left_running),
            len(t.hung),
        ]
        for t in tallies
    ]
    typed: Counter[str] = sum((t.typed_errors for t in tallies), Counter())
    kinds = ", ".join(f"{name} {n}" for name, n in typed.most_common())
    failures = [f for t in tallies for f in t.failures][:10]
    headers = [
        "provider, mode",
        "responses",
        "runs completed",
        "ended with a typed error",
        "untyped exceptions",
        "left running / leased",
        "hung",
    ]
    return (
        f"{FUZZ_TITLE}\n\n"
        f"{FUZZ_RESPONSES} malformed responses (seed {FUZZ_SEED}): a third from the catalogue "
        "of odd shapes in `ponder.testing.malformed` (arguments as objects, null or numbers, "
        "calls without a function, `type: custom`, non-text names and ids, error events "
        "mid-stream, binary, `null`, HTML and truncated bodies, cut streams), the rest "
        "random mutations of valid responses (dropped keys, wrong types, lone surrogates, "
        "truncation). Each is the first answer of one real run (SQLite store) through the "
        "fake OpenAI or Anthropic server; later requests get valid answers. A run completes "
        "(the call's error went back to the model) or ends with a ponder error. "
        "Goals: 0 untyped, 0 left running, 0 hung.\n\n"
        + table(headers, rows)
        + f"\n\nTyped errors: {kinds or 'none'}. {seconds:.0f} s in all."
        + "".join(f"\n- {f}" for f in failures)
    )


if __name__ == "__main__":
    section = fuzz_section()
    print(section)
    write_section(section)
