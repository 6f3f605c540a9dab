"""Run every benchmark module and rewrite bench/RESULTS.md.

Each module in ``MODULES`` exposes ``run() -> str``, returning one Markdown section.
Run one with ``python -m bench vm``.
"""

from __future__ import annotations

import importlib
import platform
import sys
import time
from importlib.metadata import version

from bench.common import ROOT

MODULES = ["vm", "models", "tools", "thinking", "agent", "step_react", "store", "mcp", "peers"]
MODULES += ["concurrency", "scale", "imports", "instantiation", "reflection"]
MODULES += ["real_model"]
MODULES += ["temporal"]
MODULES += ["faults"]
MODULES += ["observability"]


def _header() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        "# ponder benchmarks\n\n"
        f"Written by `make bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        f"Machine: {platform.system()} {platform.machine()} ({cpu}), "
        f"Python {platform.python_version()}, ponder {version('ponder')}. "
        "Medians of repeated runs; ratios are against ponder in the same run.\n"
    )


def main(argv: list[str]) -> None:
    """Run the named benchmark modules (all by default) and write the results."""
    names = argv or MODULES
    sections = [_header()]
    for name in names:
        try:
            module = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"bench.{name}":
                continue
            raise
        print(f"== bench.{name}", flush=True)
        section = module.run()
        print(section, flush=True)
        sections.append(section)
    if not argv:
        (ROOT / "bench" / "RESULTS.md").write_text("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
