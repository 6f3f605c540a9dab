"""The real-model task suite on a peer runtime, against an OpenAI-compatible server.

``real_suite_peer.py PEER BASE_URL CONTROL_URL MAX_TOKENS [TASK,...]``: runs each task of
`bench.real_model_tasks` once with PEER (``pydantic-ai``, ``openai-agents``, ``langgraph``,
``smolagents``), each with its documented OpenAI-compatible model class, temperature 0,
the same tools, and its default loop; before each task it asks ``CONTROL_URL + task id``
so the recording proxy files the requests under that task. Prints one JSON document:
``{"runs": [{"task", "answer", "results", "wall", "error"}]}``.
"""

from __future__ import annotations

import asyncio
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from peer_harness import emit

from bench.real_model_tasks import TASKS, Task, make_tools

MAX_TURNS = 8
"""Model requests a peer may make per task (ponder's config allows 4 tool rounds)."""


async def pydantic_ai(task: Task, tools: list[Callable[..., Any]], url: str, limit: int) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    model = OpenAIChatModel("smollm2", provider=OpenAIProvider(base_url=url, api_key="none"))
    agent = Agent(model, tools=tools, model_settings={"temperature": 0.0, "max_tokens": limit})
    result = await agent.run(task.prompt, usage_limits=UsageLimits(request_limit=MAX_TURNS))
    return str(result.output)


async def openai_agents(task: Task, tools: list[Callable[..., Any]], url: str, limit: int) -> str:
    from agents import (
        Agent,
        ModelSettings,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url, api_key="none")
    agent = Agent(
        name="assistant",
        instructions="You are a helpful assistant.",
        tools=[function_tool(f) for f in tools],
        model=OpenAIChatCompletionsModel(model="smollm2", openai_client=client),
        model_settings=ModelSettings(temperature=0.0, max_tokens=limit),
    )
    result = await Runner.run(agent, task.prompt, max_turns=MAX_TURNS)
    return str(result.final_output)


async def langgraph(task: Task, tools: list[Callable[..., Any]], url: str, limit: int) -> str:
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    llm = ChatOpenAI(
        model="smollm2", base_url=url, api_key="none", temperature=0.0, max_tokens=limit
    )
    agent = create_react_agent(llm, tools=tools)
    state = await agent.ainvoke(
        {"messages": [("user", task.prompt)]}, config={"recursion_limit": 2 * MAX_TURNS + 1}
    )
    content = state["messages"][-1].content
    return content if isinstance(content, str) else str(content)


async def smolagents(task: Task, tools: list[Callable[..., Any]], url: str, limit: int) -> str:
    from smolagents import OpenAIServerModel, ToolCallingAgent
    from smolagents import tool as smol_tool

    model = OpenAIServerModel(
        model_id="smollm2", api_base=url, api_key="none", temperature=0.0, max_tokens=limit
    )
    agent = ToolCallingAgent(
        tools=[smol_tool(f) for f in tools], model=model, max_steps=MAX_TURNS, verbosity_level=0
    )
    return str(await asyncio.to_thread(agent.run, task.prompt))


PEERS = {
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
    "langgraph": langgraph,
    "smolagents": smolagents,
}


async def main(
    peer: str, url: str, control: str, limit: int, chosen: list[str]
) -> list[dict[str, Any]]:
    run = PEERS[peer]
    runs = []
    for task in [t for t in TASKS if not chosen or t.id in chosen]:
        urllib.request.urlopen(control + task.id, timeout=30).read()
        record: list[Any] = []
        functions = make_tools(record)
        start = time.perf_counter()
        answer, error = "", ""
        try:
            answer = await run(task, [functions[n] for n in task.tools], url, limit)
        except Exception as exc:  # a peer's failure is a row, not a lost suite
            error = f"{type(exc).__name__}: {exc}"[:200]
        wall = time.perf_counter() - start
        results = [str(r) for r in record]
        runs.append(
            {"task": task.id, "answer": answer, "results": results, "wall": wall, "error": error}
        )
    return runs


if __name__ == "__main__":
    name, base_url, control_url, max_tokens = sys.argv[1:5]
    ids = sys.argv[5].split(",") if len(sys.argv) > 5 else []
    emit({"runs": asyncio.run(main(name, base_url, control_url, int(max_tokens), ids))})
