"""The entry points across ways of calling them: typed sync and streaming forms,
`resume_sync`, and one agent under several ``asyncio.run`` calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import assert_type

from pydantic import BaseModel

from ponder.agent import Agent, RunResult
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import open_store
from ponder.tools import tool


class Total(BaseModel):
    value: int


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed to {target}"


def test_resume_sync_continues_a_suspended_run_with_its_type(tmp_path: Path) -> None:
    store = open_store(tmp_path / "runs.db")
    script = [
        call_tools(("deploy", {"target": "prod"})),
        call_tools(("agent_stop", {})),
        reply("Deployed."),
        reply('{"value": 3}'),
    ]
    agent = Agent(
        ScriptedModel(script),
        tools=[deploy],
        store=store,
        agent_thought_mode="chat",
        output_type=Total,
    )
    suspended = agent.run_sync("Deploy to prod.")
    assert suspended.status == "suspended"
    done = agent.resume_sync(suspended.run_id, "approve")
    assert_type(done, RunResult[Total])
    assert done.status == "completed" and done.output == Total(value=3)


def test_the_sync_forms_take_real_keywords_and_carry_the_type() -> None:
    agent: Agent[str] = Agent(ScriptedModel(['{"value": 7}']), tool_calling_mode="none")
    result = agent.run_sync("q", output_type=Total, run_id="typed-1")
    assert_type(result, RunResult[Total])
    assert result.output == Total(value=7) and result.run_id == "typed-1"
    events = list(
        Agent(ScriptedModel(["hi"]), tool_calling_mode="none").stream_sync("q", run_id="s-1")
    )
    assert {e.run_id for e in events} == {"s-1"}


async def test_stream_carries_the_type() -> None:
    agent = Agent(ScriptedModel(['{"value": 5}']), tool_calling_mode="none", output_type=Total)
    stream = agent.stream("q")
    _ = [e async for e in stream]
    assert_type(stream.result, RunResult[Total])
    assert stream.result.output == Total(value=5)


SCRIPT = textwrap.dedent(
    """
    import asyncio, gc
    from ponder.agent import Agent
    from ponder.testing import FakeOpenAIServer

    with FakeOpenAIServer(["one", "two", "three"]) as server:
        agent = Agent("openai:fake", base_url=server.base_url, api_key="k",
                      tool_calling_mode="none")
        outputs = []
        for prompt in ("a", "b", "c"):
            outputs.append(asyncio.run(agent.run(prompt)).output)
            gc.collect()
        print(outputs)
    """
)


def test_one_agent_under_several_asyncio_runs_leaves_no_noise(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "-W", "always", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['one', 'two', 'three']"
    for noise in ("Event loop is closed", "never retrieved", "Traceback", "unclosed"):
        assert noise not in done.stderr
