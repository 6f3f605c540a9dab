"""Run every benchmark module and rewrite bench/RESULTS.md.

Each module in ``MODULES`` exposes ``run() -> str``, returning one Markdown section.
Run one with ``python -m bench vm`` (it prints); ``python -m bench --write vm tools``
also puts those sections into RESULTS.md in place of their previous versions and says so
in its header.
"""

from __future__ import annotations

import importlib
import platform
import re
import sys
import time
from importlib.metadata import version

from bench.common import ROOT, write_section

RESULTS = ROOT / "bench" / "RESULTS.md"

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
    write = argv[:1] == ["--write"]
    argv = argv[1:] if write else argv
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
        RESULTS.write_text("\n\n".join(sections) + "\n")
    elif write:
        _rewrite(names, sections[1:])


def _rewrite(names: list[str], sections: list[str]) -> None:
    """Put each ``## `` section of ``sections`` into RESULTS.md; note it in the header."""
    for text in sections:
        for part in re.split(r"\n(?=## )", text.strip()):
            write_section(part, RESULTS)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    note = f"Rewritten by `python -m bench --write {' '.join(names)}` on {stamp}."
    lines = RESULTS.read_text().split("\n")
    written = next(i for i, line in enumerate(lines) if line.startswith("Written by"))
    if lines[written + 2].startswith("Rewritten by"):
        del lines[written + 1 : written + 3]
    lines[written + 1 : written + 1] = ["", note]
    RESULTS.write_text("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
