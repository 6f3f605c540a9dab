"""Runs killed with SIGKILL at durable boundaries resume to the same end, exactly once."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import PG_DSN, postgres_available

ROOT = Path(__file__).resolve().parents[2]
TRIALS = 50


def worker(
    url: str,
    run_id: str,
    log: Path,
    mode: str,
    crash: int | None = None,
    value: Any = None,
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    args = [
        sys.executable,
        "-m",
        "tests.durable.worker",
        url,
        run_id,
        str(log),
        mode,
        "" if crash is None else str(crash),
        "" if value is None else json.dumps(value),
    ]
    proc = subprocess.run(
        args,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode == 0:
        return 0, json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == -9, proc.stderr[-3000:]
    return proc.returncode, {}


def store_url(backend: str, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    return PG_DSN


def trial(url: str, tmp_path: Path, index: int, crash_at: int) -> tuple[dict[str, Any], list[str]]:
    run_id = f"crash-{os.getpid()}-{index}-{random.randrange(1 << 30)}"
    log = tmp_path / f"{run_id}.log"
    code, _ = worker(url, run_id, log, "start", crash_at)
    assert code == -9, f"trial {index}: the worker should have been killed at write {crash_at}"
    code, result = worker(url, run_id, log, "resume")
    assert code == 0
    return result, log.read_text().split()


@pytest.mark.slow
@pytest.mark.timeout(600)  # 100 interpreter start-ups; slow on a busy machine
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_killed_runs_resume_to_the_uninterrupted_ledger(backend: str, tmp_path: Path) -> None:
    url = store_url(backend, tmp_path)
    code, reference = worker(
        url, f"reference-{random.randrange(1 << 30)}", tmp_path / "ref.log", "start"
    )
    assert code == 0 and reference["status"] == "completed"
    boundaries = reference["writes"]
    assert boundaries >= 10
    rng = random.Random(20261130)
    points = list(range(1, boundaries)) + [rng.randrange(1, boundaries) for _ in range(TRIALS)]
    points = points[:TRIALS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda p: trial(url, tmp_path, *p), enumerate(points)))
    for (result, log), point in zip(results, points, strict=True):
        assert result["status"] == "completed", point
        assert result["messages"] == reference["messages"], f"killed at write {point}"
        counts = Counter(log)
        assert all(n == 1 for n in counts.values()), f"killed at write {point}: {counts}"
        assert sorted(counts) == ["m0a", "m0b", "m1a", "m1b", "m2a", "m2b"]
