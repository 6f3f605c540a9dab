"""Secrets in a tool's exception text never reach the model, the store or the events."""

from __future__ import annotations

import json

from ponder.agent import Agent
from ponder.events import Event, event_to_dict
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import Store
from ponder.tools import tool

SECRETS = ["hunter2", "s3cr3t-token", "eyJhbGciOiJIUzI1NiJ9", "sk-live0123456789abcdefXYZ"]


@tool
async def connect(database: str) -> str:
    """Connect to a database.

    Args:
        database: Which one.
    """
    raise ConnectionError(
        f"cannot reach postgresql://admin:hunter2@db.internal/{database}; "
        "token=s3cr3t-token, Authorization: Bearer eyJhbGciOiJIUzI1NiJ9 "
        "with key sk-live0123456789abcdefXYZ"
    )


async def test_secrets_in_tool_errors_are_redacted_everywhere(store: Store) -> None:
    sent: list[str] = []

    def model(request: ModelRequest) -> ModelResponse:
        sent.append(json.dumps([m.model_dump(mode="json") for m in request.messages]))
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call_tools(("connect", {"database": "prod"}))
        if len(results) == 1:
            return call_tools(("agent_stop", {"result": "failed"}))
        return reply("the database is unreachable")

    events: list[Event] = []
    agent = Agent(
        ScriptedModel(model),
        tools=[connect],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )
    agent.on_event("*")(events.append)
    result = await agent.run("check the database")
    assert result.status == "completed"
    error = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert error.is_error and "db.internal/prod" in error.content
    assert "[redacted]" in error.content
    stored = await store.load(result.run_id)
    places = {
        "requests": "\n".join(sent),
        "store": json.dumps([stored.messages, stored.effects]),
        "events": json.dumps([event_to_dict(e) for e in events], default=str),
    }
    for where, text in places.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked into the {where}"
