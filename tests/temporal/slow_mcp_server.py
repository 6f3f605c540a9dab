"""An MCP server (stdio) that is slow to start: ``python slow_mcp_server.py LOG HOLD``.

It writes ``mcp starting`` to LOG, waits while the file HOLD exists, then serves the
tools of ``tests/fixtures/mcp_server.py``; a test kills its worker while it waits, in the
middle of the run's setup step.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    log, hold = Path(sys.argv[1]), Path(sys.argv[2])
    with log.open("a", encoding="utf-8") as file:
        file.write("mcp starting\n")
    deadline = time.monotonic() + 120
    while hold.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.mcp_server import build_server

    asyncio.run(build_server("slow").run_stdio_async())


if __name__ == "__main__":
    main()
