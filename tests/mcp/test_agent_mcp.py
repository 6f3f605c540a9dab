"""An agent using MCP servers' tools end to end: pooled sessions, no leaked processes."""

from __future__ import annotations

import asyncio
import json
import sys

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from tests.mcp.conftest import descendants, stdio_entry


def results_of(request: ModelRequest) -> list[ToolMessage]:
    return [m for m in request.messages if isinstance(m, ToolMessage)]


def adder(request: ModelRequest) -> ModelResponse:
    done = len(results_of(request))
    if done < 2:
        return call_tools(("add", {"a": done, "b": 40}))
    if done == 2:
        return call_tools(("agent_stop", {}))
    return reply("sums: " + ", ".join(m.content for m in results_of(request)[:2]))


async def test_an_agent_calls_mcp_tools_and_closes_its_servers() -> None:
    before = descendants()
    model = ScriptedModel(adder)
    agent = Agent(
        model,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[stdio_entry("--name", "calc")],
    )
    async with agent:
        first = await agent.run("add things")
        second = await agent.run("add again")
        assert len(descendants() - before) >= 1  # one pooled server process for both runs
        assert "add" in [t.name for t in model.requests[0].tools]
    assert first.output == "sums: 40, 41" and second.output == "sums: 40, 41"
    await asyncio.sleep(0.2)
    assert descendants() - before == set()


async def test_ponders_thinking_server_through_the_mcp_client() -> None:
    entry = "stdio://" + json.dumps([sys.executable, "-m", "ponder.mcp.thinking.server"])

    def think(request: ModelRequest) -> ModelResponse:
        done = len(results_of(request))
        if done < 2:
            return call_tools(
                (
                    "sequentialthinking",
                    {
                        "thought": f"step {done + 1}",
                        "thoughtNumber": done + 1,
                        "totalThoughts": 2,
                        "nextThoughtNeeded": done == 0,
                    },
                )
            )
        if done == 2:
            return call_tools(("agent_stop", {}))
        return reply("thought twice")

    agent = Agent(
        ScriptedModel(think),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[entry],
    )
    async with agent:
        result = await agent.run("think")
    thoughts = [m for m in result.messages if isinstance(m, ToolMessage)][:2]
    payloads = [json.loads(m.content) for m in thoughts]
    assert [p["thoughtHistoryLength"] for p in payloads] == [1, 2]
    assert payloads[1]["nextThoughtNeeded"] is False
    assert result.output == "thought twice"


async def test_a_broken_mcp_entry_leaves_the_agent_working() -> None:
    model = ScriptedModel([call_tools(("agent_stop", {})), reply("fine without it")])
    agent = Agent(
        model,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=['stdio://["/no/such/program"]'],
    )
    async with agent:
        result = await agent.run("go")
    assert result.output == "fine without it"
    assert agent.toolbox.mcp is not None and agent.toolbox.mcp.errors
