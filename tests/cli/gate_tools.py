"""A tool that waits at a gate, for the Ctrl-C tests: ``--tools tests.cli.gate_tools:TOOLS``.

``wait_at_gate`` appends a line to ``$GATE_DIR/started`` when it starts and returns once
the file ``$GATE_DIR/open`` exists, so a test knows a call is running and decides when
it ends.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ponder.tools import tool


@tool(timeout=120)
def wait_at_gate(label: str) -> str:
    """Wait until the gate opens.

    Args:
        label: What the call is for.
    """
    gate = Path(os.environ["GATE_DIR"])
    with (gate / "started").open("a") as handle:
        handle.write(label + "\n")
    while not (gate / "open").exists():
        time.sleep(0.05)
    return f"passed the gate: {label}"


TOOLS = [wait_at_gate]
