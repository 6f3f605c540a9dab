"""The testing guide's examples run as written (docs/guides/testing.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "testing.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_each_python_block_of_the_testing_guide_runs(number: int, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[number], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_reasoning_required_script_drives_a_run_to_its_answer() -> None:
    namespace: dict[str, Any] = {}
    exec(BLOCKS[0], namespace)
    exec(BLOCKS[1], namespace)
    from ponder import Agent
    from ponder.models import ScriptedModel

    agent = Agent(ScriptedModel(namespace["script"]), tools=[namespace["in_stock"]])
    result = agent.run_sync("How many pears?", deps=namespace["Shop"]({"pears": 3}))
    assert result.output == "There are 3 pears in stock." and result.usage.requests == 5
