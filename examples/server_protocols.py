"""``ponder serve`` speaks AG-UI to frontends and A2A to other agents.

Starts the server as a subprocess (``pip install 'ponder[server,agui,a2a]'``), runs the
agent once through the AG-UI endpoint (the event stream a frontend renders), once as an
A2A task with the official ``a2a-sdk`` client, and once as the sub-agent of a local agent
(``A2AAgent``, a remote agent as a tool).

    python examples/server_protocols.py --model openai:gpt-4o-mini   # OPENAI_API_KEY
    python examples/server_protocols.py --offline    # the `scripted` model echoes
"""

from __future__ import annotations

import asyncio
import json

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_artifact_text, new_text_message
from a2a.types.a2a_pb2 import Role, SendMessageRequest, TaskState

from offline import arguments
from ponder import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.protocols.a2a_client import A2AAgent
from server_openai_client import OFFLINE_CONFIG, ponder_serve


def agui_run(url: str) -> None:
    """One AG-UI run: post the conversation, read the typed events."""
    body = {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": "Hello from a frontend."}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    with httpx.stream("POST", f"{url}/v1/agui", json=body, timeout=120) as response:
        events = [
            json.loads(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: ")
        ]
    kinds = [e["type"] for e in events]
    print(f"ag-ui: {kinds[0]} ... {kinds[-1]}")
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    print(f"ag-ui text: {text}")


async def a2a_task(url: str) -> None:
    """The agent card, then one A2A task through the official client and its answer."""
    card = httpx.get(f"{url}/.well-known/agent-card.json").json()
    print(f"a2a card: {card['name']}, streaming={card['capabilities']['streaming']}")
    client = await create_client(url, ClientConfig(streaming=False))
    message = new_text_message("Hello from another agent.", role=Role.ROLE_USER)
    async for item in client.send_message(SendMessageRequest(message=message)):
        if item.HasField("task"):
            print(f"a2a task: {TaskState.Name(item.task.status.state)}")
            print(f"a2a answer: {get_artifact_text(item.task.artifacts[0])}")
    await client.close()


def delegate(request: ModelRequest) -> ModelResponse:
    """Offline stand-in for a model: hand the question over, then pass the answer on."""
    results = [m for m in request.messages if isinstance(m, ToolMessage)]
    if not results:
        return call_tools(("helper", {"task": "Answer for me."}))
    return reply(f"my helper says: {results[-1].content}")


def main() -> None:
    options = arguments(__doc__ or "")
    offline = ("scripted", "--config", str(OFFLINE_CONFIG))
    with ponder_serve(*offline) if options.offline else ponder_serve(options.model) as url:
        agui_run(url)
        asyncio.run(a2a_task(url))
        helper = A2AAgent(url, name="helper", description="An agent that answers questions.")
        model = ScriptedModel(delegate) if options.offline else options.model
        local = Agent(model, tools=[helper], agent_thought_mode="chat")
        print(f"sub-agent: {local.run_sync('Ask the helper to answer.').text}")


if __name__ == "__main__":
    main()
