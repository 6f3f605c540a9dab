"""Every script in ``examples/`` runs as a user would run it, offline, and prints what its
docstring promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.test_feature_examples import FEATURES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXPECTED = {
    "tool_agent.py": ["tool add -> 5", "tool multiply -> 20", "answer: (2 + 3) * 4 = 20"],
    "step_react.py": [
        "plan: apples, pears, total",
        "step 1 of 3: apples",
        "  done: Apples cost 3 euros.",
        "step 2 of 3: pears",
        "  done: Pears cost 4 euros.",
        "step 3 of 3: total",
        "  done: Together they cost 7 euros.",
        "answer: An apple and a pear cost 7 euros together.",
    ],
    "durable_approval.py": [
        "status: suspended",
        "waiting for approval: deploy {'version': '1.2.0'}",
        "status: completed",
        "answer: Version 1.2.0 is deployed.",
    ],
    "mcp_tools.py": [
        'mcp tool sequentialthinking: { "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded',
        "answer: Cache when the same reads repeat.",
    ],
    "server_openai_client.py": ["answer: Say hello.", "streamed: Stream this back."],
    "server_protocols.py": [
        "ag-ui: RUN_STARTED ... RUN_FINISHED",
        "ag-ui text: Hello from a frontend.",
        "a2a card: ponder, streaming=True",
        "a2a task: TASK_STATE_COMPLETED",
        "a2a answer: Hello from another agent.",
        "sub-agent: my helper says: Answer for me.",
    ],
}


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PONDER_"))}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env=env,
    )


def test_every_example_is_tested() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py")} - {"offline.py"}
    assert scripts == {*EXPECTED, "local_model.py", *(f"{name}.py" for name in FEATURES)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_example_runs_offline(name: str) -> None:
    done = run_example(name, "--offline")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == EXPECTED[name]
    assert "Traceback" not in done.stderr


def test_the_local_model_example_stands_in_a_fake_server_with_llama_cpp_quirks() -> None:
    done = run_example("local_model.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "degraded for this server: required_tool_choice" in lines
    assert "tool word_count -> 4" in lines
    assert lines[-1] == "answer: The sentence has 4 words."


def test_an_example_without_a_key_fails_with_a_clear_error() -> None:
    done = run_example("tool_agent.py")
    assert done.returncode != 0
    assert "OPENAI_API_KEY" in done.stderr
