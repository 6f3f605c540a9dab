"""The examples of typed answers, fallback models, sub-agents and attachments run as shipped
(they need no server: ScriptedModel stands in for the model)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


FEATURES = {
    "structured_output": "Lisbon: 24 °C, sunny, light wind",
    "fallback_models": "primary failed; backup answered\nHello from the backup model.",
    "sub_agents": "[researcher / call_1] run_finished\nIt is 330 metres tall. (4 requests",
    "images_and_files": "user:image:image/png, user:file:application/pdf, tool:image:image/png",
}


@pytest.mark.parametrize(("name", "expected"), sorted(FEATURES.items()))
def test_example_runs(name: str, expected: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
