"""Shared helpers for the benchmarks: timing, the peer environment, Markdown tables."""

from __future__ import annotations

import gc
import json
import os
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEER_VENV = ROOT / ".bench-venv"
PEER_REQUIREMENTS = ROOT / "bench" / "peers-requirements.txt"
PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
"""The PostgreSQL server the store benchmarks use when it answers."""


def median_seconds(fn: Callable[[], Any], *, repeat: int = 7, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def instantiation(make: Callable[[], Any], *, repeat: int = 7, kept: int = 200) -> dict[str, float]:
    """Seconds per ``make()`` (median of ``repeat`` batches) and traced bytes each one keeps.

    A batch lasts about 0.2 s. The memory is the growth of tracemalloc's traced total while
    ``kept`` agents stay alive, divided by ``kept``, after warm-up builds (imports, caches).
    """
    start = time.perf_counter()
    for _ in range(20):
        make()
    batch = max(20, min(5000, int(0.2 * 20 / (time.perf_counter() - start))))
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(batch):
            make()
        times.append((time.perf_counter() - start) / batch)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    alive = [make() for _ in range(kept)]
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del alive
    return {"seconds": statistics.median(times), "bytes": (after - before) / kept}


def peer_python() -> Path:
    """The interpreter of the separate peer environment, created on first use."""
    python = PEER_VENV / "bin" / "python"
    stamp = PEER_VENV / ".installed"
    if not stamp.exists() or stamp.stat().st_mtime < PEER_REQUIREMENTS.stat().st_mtime:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(PEER_REQUIREMENTS)],
            check=True,
        )
        stamp.touch()
    return python


def run_peer(script: str, *args: str, timeout: float = 900) -> Any:
    """Run ``bench/peers/<script>`` in the peer environment; it prints one JSON document."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [str(peer_python()), str(ROOT / "bench" / "peers" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def postgres_up(dsn: str = PG_DSN) -> bool:
    """True when the PostgreSQL server at ``dsn`` accepts a connection within 3 s."""
    try:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=3):
            return True
    except Exception:
        return False


def in_fresh_interpreter(code: str) -> str:
    """The last line ``code`` prints when run by a new interpreter of this environment.

    Fresh: nothing an earlier measurement left in this process's heap counts.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), *sys.path])))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.splitlines()[-1]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_us(seconds: float) -> str:
    """Seconds as microseconds with two significant decimals."""
    return f"{seconds * 1e6:.2f} µs"


def fmt_ratio(value: float, base: float) -> str:
    """``value / base`` as ``12.3×``."""
    return f"{value / base:.1f}×" if base > 0 else "n/a"


def write_section(section: str, path: Path = ROOT / "bench" / "RESULTS.md") -> None:
    """Put ``section`` into RESULTS.md in place of its previous version (or at the end).

    A section is known by its first line (its ``## `` title).
    """
    title = section.split("\n", 1)[0]
    text = path.read_text() if path.exists() else ""
    pattern = re.compile(re.escape(title) + r"\n.*?(?=\n## |\Z)", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip() + "\n", text, count=1)
    else:
        text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
    path.write_text(text)
