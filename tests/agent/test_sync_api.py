"""The synchronous API: `run_sync` and `stream_sync`, from scripts and from inside a loop."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.models import ScriptedModel

SCRIPT = textwrap.dedent(
    """
    from ponder.agent import Agent
    from ponder.testing import FakeOpenAIServer

    with FakeOpenAIServer(["one", "two", "three", "four"]) as server:
        agent = Agent(
            "openai:gpt-4o-mini", base_url=server.base_url, api_key="k",
            agent_strategy="no-action",
        )
        outputs = [agent.run_sync(f"turn {n}").output for n in range(3)]
        kinds = [event.kind for event in agent.stream_sync("turn 4")]
        print(outputs, kinds[0], kinds[-1])
    """
)


def test_repeated_run_sync_in_a_script_leaves_no_tracebacks(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "-X", "dev", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['one', 'two', 'three'] run_started run_finished"
    noises = ("Event loop is closed", "never retrieved", "Traceback", "never awaited", "unclosed")
    for noise in noises:
        assert noise not in done.stderr


def test_stream_sync_yields_typed_events_and_the_answer() -> None:
    agent = Agent(ScriptedModel(["hello there"]), agent_strategy="no-action")
    events = list(agent.stream_sync("hi"))
    kinds = [event.kind for event in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert events[-1].output == "hello there"  # type: ignore[union-attr]


def test_leaving_stream_sync_early_cancels_the_run() -> None:
    agent = Agent(ScriptedModel(["hello there", "hello there"]), agent_strategy="no-action")
    for event in agent.stream_sync("hi"):
        assert event.kind == "run_started"
        break
    # the thread's loop is still usable afterwards
    assert agent.run_sync("again").output == "hello there"


async def test_run_sync_inside_a_running_loop_says_to_await() -> None:
    agent = Agent(ScriptedModel(["never"]), agent_strategy="no-action")
    with pytest.raises(UserError, match=r"await agent\.run"):
        agent.run_sync("hi")
    with pytest.raises(UserError, match="running event loop"):
        next(iter(agent.stream_sync("hi")))
