"""Every request of a run extends the one before it, on the wire.

The stock llama-cpp-python template appends the whole tool list to every system message,
so the round's reasoning goes to it as a user message (the ``late_system`` capability);
every action request offers the same tools, so a provider's prompt cache and a local
server's template see the same head.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from ponder import Agent
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer

from .scripts import PROMPT, multiply

SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "think_and_reason", "arguments": {"summary": "multiply"}}]},
    {"tool_calls": [{"name": "multiply", "arguments": {"a": 17, "b": 23}}]},
    {"tool_calls": [{"name": "think_and_reason", "arguments": {"summary": "answer"}}]},
    {"tool_calls": [{"name": "agent_stop", "arguments": {"result": "391"}}]},
    "17 times 23 is 391.",
]


def _run(model: str, **config: Any) -> list[dict[str, Any]]:
    """The request bodies of one run; the answer differs when a limit ended it."""
    forget_learned()
    with FakeOpenAIServer(SCRIPT) as server:
        agent = Agent(
            model,
            tools=[multiply],
            base_url=server.base_url,
            api_key="k",
            enable_thinking_tool=False,
            max_retries=0,
            agent_thought_mode="reasoning-required",  # the script reasons every round
            **config,
        )
        result = agent.run_sync(PROMPT)
        bodies = server.requests
    assert result.output
    return bodies


def _roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def _sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages, less the instruction a degraded ``required`` adds to one request."""
    messages: list[dict[str, Any]] = body["messages"]
    if str(messages[-1].get("content")).startswith("Reply with a tool call now"):
        return messages[:-1]
    return messages


@pytest.mark.parametrize("model", ["llamacpp:smollm2", "openai:gpt-4o-mini"])
@pytest.mark.parametrize("limit", [2, 9])
def test_each_request_extends_the_previous_one(model: str, limit: int) -> None:
    bodies = _run(model, agent_tool_call_limit=limit)  # 2: the answer after the limit
    for before, after in itertools.pairwise(bodies):
        assert after["messages"][: len(_sent(before))] == _sent(before)
        assert after["tools"] == before["tools"]  # the answer after a limit keeps them too
    # ... with tools off by tool_choice, so its prompt still begins as the others' did
    assert (bodies[-1]["tool_choice"] == "none") is (limit == 2)


def test_the_llamacpp_profile_sends_the_reasoning_as_a_user_message() -> None:
    bodies = _run("llamacpp:smollm2")
    for body in bodies:
        assert _roles(body).count("system") == 1 and _roles(body)[0] == "system"
    fed_back = [
        m for m in bodies[-1]["messages"] if "<BEGIN_OF_REASONING>" in (m.get("content") or "")
    ]
    assert fed_back and {m["role"] for m in fed_back} == {"user"}


def test_other_providers_keep_the_reasoning_a_system_message() -> None:
    bodies = _run("openai:gpt-4o-mini")
    fed_back = [
        m for m in bodies[-1]["messages"] if "<BEGIN_OF_REASONING>" in (m.get("content") or "")
    ]
    assert fed_back and {m["role"] for m in fed_back} == {"system"}


def test_the_capability_can_be_turned_back_on_in_the_config() -> None:
    bodies = _run("llamacpp:smollm2", model_capabilities={"late_system": True})
    assert _roles(bodies[-1]).count("system") > 1
    assert json.dumps(bodies[-1]).count("<BEGIN_OF_REASONING>") >= 1


def test_a_provider_that_does_not_obey_tool_choice_gets_no_tools_with_tools_off() -> None:
    # it might call them anyway: the answer after a limit is asked with none
    bodies = _run(
        "openai:gpt-4o-mini",
        agent_tool_call_limit=2,
        model_capabilities={"forced_tool_choice": False},
    )
    assert "tools" in bodies[0] and "tools" not in bodies[-1]
