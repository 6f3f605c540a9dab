"""Cold import time of modules, each in a fresh interpreter: ``import_timer.py MODULE...``.

For each module: one discarded run (byte-code caches), then the median of ``REPEAT``
fresh subprocesses, each timing ``import MODULE`` with ``time.perf_counter``.
Works in any environment (ponder's or the peers'); prints one JSON document.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

REPEAT = 7
PROGRAM = (
    "import time; t = time.perf_counter(); import {module}; "
    "print('IMPORT_SECONDS', time.perf_counter() - t)"
)


def _once(module: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(module=module)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("IMPORT_SECONDS "):
            return float(line.split()[1])
    raise RuntimeError(f"import {module} failed: {proc.stderr.strip()[-300:]}")


def median_import(module: str, repeat: int = REPEAT) -> float:
    """Median cold import time of ``module`` in seconds."""
    _once(module)
    return statistics.median(_once(module) for _ in range(repeat))


def main(modules: list[str]) -> None:
    """Print ``{"imports": {module: seconds | error}}``."""
    found: dict[str, float | str] = {}
    for module in modules:
        try:
            found[module] = median_import(module)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            found[module] = str(exc)[:200]
    print(json.dumps({"imports": found}))


if __name__ == "__main__":
    main(sys.argv[1:])
