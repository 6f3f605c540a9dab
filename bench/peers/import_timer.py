"""Cold import time, each in a fresh interpreter: ``import_timer.py STATEMENT...``.

A statement is an import statement, or a module name (timed as ``import MODULE``). Each
is run once to warm the byte-code caches, then ``REPEAT`` rounds run every statement once,
in turn, in a fresh subprocess that times it with ``time.perf_counter``; the result is the
median per statement. Works in any environment (ponder's or the peers'); prints one JSON
document keyed by the arguments as given.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

REPEAT = 7
PROGRAM = (
    "import time; t = time.perf_counter()\n{statement}\n"
    "print('IMPORT_SECONDS', time.perf_counter() - t)"
)


def _statement(argument: str) -> str:
    return argument if " " in argument or "\n" in argument else f"import {argument}"


def _once(argument: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(statement=_statement(argument))],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("IMPORT_SECONDS "):
            return float(line.split()[1])
    raise RuntimeError(f"{_statement(argument)!r} failed: {proc.stderr.strip()[-300:]}")


def median_imports(arguments: list[str], repeat: int = REPEAT) -> dict[str, float | str]:
    """Median cold time of each statement in seconds, or why it failed."""
    times: dict[str, list[float]] = {}
    failed: dict[str, str] = {}
    for argument in arguments:
        try:
            _once(argument)
            times[argument] = []
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            failed[argument] = str(exc)[:200]
    for _ in range(repeat):
        for argument, found in times.items():
            found.append(_once(argument))
    medians: dict[str, float | str] = {a: statistics.median(t) for a, t in times.items()}
    return {a: medians.get(a, failed.get(a, "not run")) for a in arguments}


if __name__ == "__main__":
    print(json.dumps({"imports": median_imports(sys.argv[1:])}))
