"""A provider profile chooses the thought mode of a run whose config names none.

The mode shows in the requests a run sends: ``reasoning-required`` forces
``think_and_reason`` on the first request, ``inline`` offers it and never forces it,
``chat`` never offers it. An explicit
``agent_thought_mode`` (argument, config object, config file, environment) always wins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.config import AgentConfig, load_config
from ponder.models.providers import PROVIDERS
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

THINK = "think_and_reason"


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def _reply(body: dict[str, Any]) -> FakeReply:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice["function"]["name"] == THINK:
        return FakeReply(tool_calls=[FakeToolCall(name=THINK, arguments={"summary": "add"})])
    names = {t["function"]["name"] for t in body.get("tools", [])}
    if choice == "none":  # tools off (they are still sent, for the prompt's prefix)
        return FakeReply(content="3")
    if "agent_stop" in names and not any(m["role"] == "tool" for m in body["messages"]):
        return FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])
    return FakeReply(content="3")


def _mode_seen(requests: list[dict[str, Any]]) -> str:
    """``reasoning-required`` when the first request forces reasoning, ``chat`` when no
    request offers it, else ``inline``."""
    first = requests[0].get("tool_choice")
    if isinstance(first, dict) and first["function"]["name"] == THINK:
        return "reasoning-required"
    offered = any(THINK in str(r.get("tools", "")) for r in requests)
    return "inline" if offered else "chat"


async def _run(model: str, config: AgentConfig | None = None, **overrides: Any) -> str:
    async with FakeOpenAIServer(_reply) as server:
        agent = Agent(
            model, tools=[add], config=config, base_url=server.base_url, api_key="k", **overrides
        )
        result = await agent.run("add 1 and 2")
    assert result.output == "3"
    return _mode_seen(server.requests)


async def test_the_llamacpp_profile_runs_inline_unless_told_otherwise() -> None:
    assert PROVIDERS["llamacpp"].thought_mode == "inline"
    assert await _run("llamacpp:m") == "inline"
    assert await _run("llamacpp:m", agent_thought_mode="reasoning-required") == (
        "reasoning-required"
    )
    assert await _run("llamacpp:m", AgentConfig(agent_thought_mode="chat")) == "chat"


@pytest.mark.parametrize("provider", ["ollama", "vllm", "lmstudio"])
async def test_every_local_profile_chooses_inline(provider: str) -> None:
    assert await _run(f"{provider}:m") == "inline"


async def test_a_hosted_profile_keeps_reasoning_required() -> None:
    assert await _run("openai:m") == "reasoning-required"


async def test_a_config_file_or_the_environment_naming_the_mode_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text('agent_thought_mode = "reasoning-required"\n')
    assert await _run("llamacpp:m", load_config(path)) == "reasoning-required"
    path.write_text("max_tokens = 64\n")
    monkeypatch.setenv("PONDER_AGENT_THOUGHT_MODE", "reasoning-required")
    assert await _run("vllm:m", load_config(path)) == "reasoning-required"


async def test_a_config_without_the_mode_takes_the_profile_of_its_model() -> None:
    config = AgentConfig(model="llamacpp:m", max_tokens=64)
    assert config.agent_thought_mode is None
    async with FakeOpenAIServer(_reply) as server:
        agent = Agent(config=config, tools=[add], base_url=server.base_url, api_key="k")
        assert agent.config.agent_thought_mode == "inline"
        await agent.run("add 1 and 2")
    assert _mode_seen(server.requests) == "inline"
