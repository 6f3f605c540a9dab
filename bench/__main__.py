"""Run every benchmark module and rewrite bench/RESULTS.md.

Each module in ``MODULES`` exposes ``run() -> str``, returning one Markdown section.
Run one with ``python -m bench vm`` (it prints); ``python -m bench --write vm tools``
also puts those sections into RESULTS.md in place of their previous versions and says so
in its header.
"""

from __future__ import annotations

import importlib
import os
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
    ran: list[str] = []
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
        ran.append(name)
    if not argv:
        RESULTS.write_text("\n\n".join(sections) + "\n")
    elif write:
        _rewrite(ran, sections[1:])


def _rewrite(names: list[str], sections: list[str]) -> None:
    """Put each ``## `` section of ``sections`` into RESULTS.md, dated; say so in the header."""
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    for name, text in zip(names, sections, strict=True):
        for part in re.split(r"\n(?=## )", text.strip()):
            title, _, body = part.partition("\n")
            dated = (
                f"_Rewritten on {stamp} by `python -m bench --write {name}`"
                f" (load average {load} at the end)._"
            )
            write_section(f"{title}\n\n{dated}\n{body}", RESULTS)
    lines = RESULTS.read_text().split("\n")
    if not any(line.startswith(_REWRITTEN) for line in lines):
        written = next(i for i, line in enumerate(lines) if line.startswith("Written by"))
        lines[written + 1 : written + 1] = ["", _REWRITTEN + " carry their own date."]
    RESULTS.write_text("\n".join(lines))


_REWRITTEN = "Sections rewritten later by `python -m bench --write`"


if __name__ == "__main__":
    main(sys.argv[1:])
