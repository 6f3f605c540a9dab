"""The README's promises: its first commands work on a fresh copy, its cost table is true."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ponder import Agent, AgentConfig, tool
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.base import ForceTool

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


@tool
def weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: The city's name.
    """
    return f"{city}: 21 °C, sunny"


def _called(request: ModelRequest) -> set[str]:
    return {c.name for m in request.messages for c in getattr(m, "tool_calls", ()) or ()}


def one_tool_model(request: ModelRequest) -> ModelResponse:
    """A model that looks the weather up once, stops, and answers."""
    offered, called = {t.name for t in request.tools}, _called(request)
    if isinstance(request.tool_choice, ForceTool):
        summary = {"last_step": "", "summary": "look the weather up"}
        return call_tools((request.tool_choice.name, summary))
    if "weather" in offered and "weather" not in called:
        return call_tools(("weather", {"city": "Paris"}))
    if "agent_stop" in offered and "agent_stop" not in called:
        return call_tools(("agent_stop", {"result": "21 °C and sunny"}))
    return reply("It is 21 °C and sunny in Paris.")


def _cost_rows() -> dict[str, tuple[int, int]]:
    section = README[README.index("## What a run costs") :]
    rows = re.findall(r"^\| `([a-z-]+)`[^|]*\| (\d+) \| ([\d,]+) \|", section, re.M)
    return {mode: (int(requests), int(tokens.replace(",", ""))) for mode, requests, tokens in rows}


@pytest.mark.parametrize("mode", ["reasoning-required", "reasoning", "inline", "chat"])
async def test_the_cost_table_states_each_modes_requests_and_tokens(mode: str) -> None:
    model = ScriptedModel(one_tool_model)
    agent = Agent(model, tools=[weather], config=AgentConfig(agent_thought_mode=mode))
    result = await agent.run("What is the weather in Paris?")
    assert result.output == "It is 21 °C and sunny in Paris."
    assert _called(model.requests[-1]) >= {"weather", "agent_stop"}
    requests, input_tokens = _cost_rows()[mode]
    assert result.usage.requests == requests
    # prompts change a little from release to release; the stated figure stays within 10 %
    assert abs(result.usage.input_tokens - input_tokens) <= input_tokens // 10


def test_the_readme_states_the_demos_cost() -> None:
    from ponder.cli.demo import DEMO_TASK, demo_agent

    result = demo_agent(delay=0).run_sync(DEMO_TASK)
    usage = result.usage
    assert f"{usage.requests} requests and {usage.input_tokens:,} input tokens" in README


def _first_commands() -> list[str]:
    install = README[README.index("## Install") :]
    block = re.search(r"```sh\n(.*?)```", install, re.S)
    assert block is not None
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_first_three_commands_work_on_a_fresh_copy(tmp_path: Path) -> None:
    commands = _first_commands()
    assert commands[1] == "pip install ." and commands[2] == "ponder demo", commands
    clone = tmp_path / "ponder"
    ignore = shutil.ignore_patterns(".venv", ".cache", ".git", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT, clone, ignore=ignore)
    script = "set -e\n" + "\n".join(commands) + "\n"
    env: dict[str, Any] = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    python = Path(sys.base_prefix) / "bin"
    env["PATH"] = f"{python}:{env['PATH']}"
    done = subprocess.run(
        ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Lisbon is warmer" in done.stdout
    assert "9 request(s)" in done.stdout


def test_make_demo_installs_the_plain_package_and_make_test_the_test_tools(
    tmp_path: Path,
) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")

    def planned(target: str) -> list[str]:
        done = subprocess.run(
            ["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if "pip install" in line]

    demo = planned("demo")
    assert demo and all("[" not in line for line in demo), demo
    assert any(line.endswith("pip install --quiet -e .") for line in demo)
    assert any("-e '.[dev,compat]'" in line for line in planned("test"))
