"""``use_minimal_context`` means the same in every mode: earlier turns are not sent.

Every request of the turn carries the system prompt, the turn's own message and what the
turn produced (calls, results, instructions); the earlier turns stay in the ledger.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.messages import AssistantMessage, Message, TextPart, UserMessage
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

HISTORY: list[Message] = [
    UserMessage(content="EARLIER-QUESTION"),
    AssistantMessage(parts=(TextPart(text="EARLIER-ANSWER"),)),
]


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def script(body: dict[str, Any]) -> FakeReply:
    messages = body["messages"]
    if body.get("response_format"):
        last = str(messages[-1]["content"]).lower()
        if "decompos" in last or ("plan" in last and "summar" not in last):
            return FakeReply(
                content=json.dumps({"needs_decomposition": False, "reason": "one", "steps": []})
            )
        return FakeReply(content=json.dumps({"summary": "looked it up", "outputs": []}))
    if body.get("tool_choice") == "required":
        looked = any(m["role"] == "tool" and "value of" in str(m["content"]) for m in messages)
        name, args = ("agent_stop", {}) if looked else ("lookup", {"key": "k"})
        return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=args)])
    return FakeReply(content="the answer")


def sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


@pytest.mark.parametrize("workflow", ["react", "step-react"])
@pytest.mark.parametrize("minimal", [True, False])
async def test_earlier_turns_are_sent_only_without_minimal_context(
    workflow: str, minimal: bool
) -> None:
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:fake",
            tools=[lookup],
            base_url=server.base_url,
            api_key="k",
            instructions="Be brief.",
            agent_workflow=workflow,
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            use_minimal_context=minimal,
        )
        result = await agent.run("CURRENT-QUESTION", message_history=HISTORY)
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "the answer"
    bodies = server.requests
    assert len(bodies) >= 3
    for body in bodies:
        text = sent_text(body)
        assert "CURRENT-QUESTION" in text and "Be brief." in text
        assert body["messages"][0]["role"] == "system"
        assert ("EARLIER-QUESTION" in text) is (not minimal)
        assert ("EARLIER-ANSWER" in text) is (not minimal)
    # the turn's own tool traffic is still sent, and the ledger keeps the earlier turns
    final = sent_text(bodies[-1])
    assert "value of k" in final
    assert next(m.content for m in result.messages if isinstance(m, UserMessage)) == (
        "EARLIER-QUESTION"
    )


async def test_chat_mode_sends_the_system_prompt_and_the_message_only() -> None:
    async with FakeOpenAIServer(["hi"]) as server:
        agent = Agent(
            "openai:fake",
            base_url=server.base_url,
            api_key="k",
            instructions="Be brief.",
            tool_calling_mode="none",
            use_minimal_context=True,
        )
        await agent.run("CURRENT-QUESTION", message_history=HISTORY)
        await agent.model.aclose()  # type: ignore[attr-defined]
    [body] = server.requests
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "CURRENT-QUESTION"},
    ]
