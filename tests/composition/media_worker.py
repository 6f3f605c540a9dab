"""One phase of an image, tracing or elicitation scenario, meant to be run as a subprocess.

    python -m tests.composition.media_worker SCENARIO STORE_URL RUN_ID

SCENARIO is ``image``, ``trace`` or ``ask`` followed by ``-start`` (a run that suspends:
for approval, or on an MCP server's question) or ``-resume`` (answer it). Prints the
result as one JSON line, with what this process saw: the finished spans' names and run
ids, and the attachments of the last request the model received.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ponder.agent import Agent
from ponder.media import Image
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.observability.instrumentation import Instrumentation
from ponder.store import open_store
from ponder.tools import tool
from tests.mcp.test_client_features import agent_for, calling

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24  # a PNG signature: enough to be an image/png
ANSWER = {"action": "accept", "content": {"name": "Ada", "age": 36}}


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed to {target}"


def seen_images(request: ModelRequest) -> list[str]:
    """The attachments of the request's user messages, as ``media_type:size``."""
    return [
        f"{a.media_type}:{len(a.data or '')}"
        for m in request.messages
        if isinstance(m, UserMessage)
        for a in m.attachments
    ]


def deploy_script(request: ModelRequest) -> ModelResponse:
    """Deploy, stop, then answer with the images the model sees."""
    done = len([m for m in request.messages if isinstance(m, ToolMessage)])
    if done == 0:
        return call_tools(("deploy", {"target": "prod"}))
    if done == 1:
        return call_tools(("agent_stop", {"result": "done"}))
    return reply("images: " + ", ".join(seen_images(request)))


def deploy_agent(**config: Any) -> Agent:
    return Agent(
        ScriptedModel(deploy_script),
        tools=[deploy],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        **config,
    )


async def main(scenario: str, url: str, run_id: str) -> None:
    store = open_store(url)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    name, phase = scenario.split("-")
    if name == "ask":
        agent = agent_for(calling(("ask_contact", {})))
    else:
        agent = deploy_agent(instrument=Instrumentation(tracer_provider=provider))
    prompt: Any = ["Deploy this.", Image(PNG)] if name == "image" else "go"
    if phase == "start":
        result = await agent.run(prompt, run_id=run_id, store=store)
    else:
        answer: Any = ANSWER if name == "ask" else "approve"
        result = await agent.resume(run_id, answer, store=store)
    await store.close()
    spans = [
        {"name": s.name, "run_id": (s.attributes or {}).get("ponder.run_id")}
        for s in exporter.get_finished_spans()
    ]
    data = {
        "status": result.status,
        "output": result.output,
        "suspension": result.suspension,
        "spans": spans,
    }
    print(json.dumps(data, default=str))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
