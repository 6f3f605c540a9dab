"""Context compaction in every workflow: compact, slide, none; pairing and reasoning kept."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.exceptions import ModelResponseError
from ponder.messages import (
    AssistantMessage,
    Ledger,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.tools import tool

from .scripts import of_kind, stop


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def looks(n: int) -> list[ModelResponse]:
    return [call_tools(("lookup", {"key": f"k{i}"})) for i in range(n)]


def react_agent(model: ScriptedModel, **config: Any) -> Agent:
    config.setdefault("agent_thought_mode", "chat")
    return Agent(model, tools=[lookup], enable_thinking_tool=False, **config)


def assert_paired(messages: object) -> None:
    Ledger(messages).ensure_sendable()  # type: ignore[arg-type]
    seq = list(messages)  # type: ignore[call-overload]
    assert not isinstance(seq[0], ToolMessage)
    calls = [c.id for m in seq if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert calls == [m.call_id for m in seq if isinstance(m, ToolMessage)]


async def test_slide_drops_the_oldest_exchanges_and_keeps_the_prompt() -> None:
    model = ScriptedModel([*looks(3), stop(), reply("done")])
    agent = react_agent(model, context_strategy="slide", memory_length_limit=6)
    events = [e async for e in agent.stream("look up three keys")]
    compactions = of_kind(events, "compaction")
    assert compactions and all(c.mode == "slide" for c in compactions)
    assert all(c.tokens_after < c.tokens_before for c in compactions)
    after = model.requests[3].messages
    assert isinstance(after[0], SystemMessage)
    assert after[1] == UserMessage(content="look up three keys")
    results = [m.content for m in after if isinstance(m, ToolMessage)]
    assert results == ["value of k1", "value of k2"]
    for request in model.requests:
        assert_paired(request.messages)
    assert of_kind(events, "run_finished")[0].output == "done"


async def test_compact_summarises_the_older_prefix_into_one_message() -> None:
    model = ScriptedModel(
        [*looks(3), "k0 was value of k0.", stop(), "k0..k2 looked up.", reply("answer")]
    )
    agent = react_agent(model, context_strategy="compact", memory_length_limit=6)
    events = [e async for e in agent.stream("look up keys")]
    summariser = model.requests[3]
    assert list(summariser.tools) == [] and summariser.tool_choice == "none"
    assert "BEGIN_OF_COMPACTION" in summariser.messages[-1].content  # type: ignore[union-attr]
    after = model.requests[4].messages
    note = after[2]
    assert after[1] == UserMessage(content="look up keys")
    assert isinstance(note, UserMessage)
    assert note.content == "[Summary of the earlier conversation]\nk0 was value of k0."
    assert "value of k0" not in [m.content for m in after if isinstance(m, ToolMessage)]
    assert [c.mode for c in of_kind(events, "compaction")] == ["compact", "compact"]
    assert_paired(after)
    assert of_kind(events, "run_finished")[0].output == "answer"


async def test_a_failed_summary_falls_back_to_slide() -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        raise ModelResponseError("summariser down")

    model = ScriptedModel([*looks(3), broken, stop(), broken, reply("answer")])
    agent = react_agent(model, context_strategy="compact", memory_length_limit=6)
    events = [e async for e in agent.stream("keys")]
    assert [c.mode for c in of_kind(events, "compaction")] == ["slide", "slide"]
    assert of_kind(events, "run_finished")[0].output == "answer"


async def test_provider_reasoning_of_the_latest_exchange_is_kept() -> None:
    last = call_tools(("lookup", {"key": "k2"}), reasoning="I must check k2 as well.")
    model = ScriptedModel([*looks(2), last, stop(), reply("ok")])
    agent = react_agent(model, context_strategy="slide", memory_length_limit=6)
    await agent.run("keys")
    after = model.requests[3].messages
    assistants = [m for m in after if isinstance(m, AssistantMessage)]
    assert assistants[-1].reasoning == "I must check k2 as well."


async def test_none_leaves_the_ledger_alone() -> None:
    model = ScriptedModel([*looks(4), stop(), reply("ok")])
    agent = react_agent(model, context_strategy="none", memory_length_limit=4)
    events = [e async for e in agent.stream("keys")]
    assert of_kind(events, "compaction") == []
    assert len(model.requests[-1].messages) > 4


async def test_the_token_trigger_uses_the_window_and_ratio() -> None:
    big = [call_tools(("lookup", {"key": "x" * 600})) for _ in range(2)]
    model = ScriptedModel([*big, stop(), reply("ok")])
    agent = react_agent(
        model, context_strategy="slide", session_tokens_windows=1000, compaction_trigger_ratio=0.5
    )
    events = [e async for e in agent.stream("keys")]
    compactions = of_kind(events, "compaction")
    assert compactions and compactions[0].tokens_before >= 500
    assert compactions[0].tokens_after < compactions[0].tokens_before


async def test_chat_mode_compacts_a_long_history_before_answering() -> None:
    history = [UserMessage(content=f"message {i}") for i in range(10)]
    model = ScriptedModel([reply("hi")])
    agent = Agent(model, tool_calling_mode="none", context_strategy="slide", memory_length_limit=4)
    events = [e async for e in agent.stream("latest", message_history=history)]
    assert len(of_kind(events, "compaction")) == 1
    sent = [m.content for m in model.requests[0].messages]  # type: ignore[union-attr]
    assert sent[-1] == "latest" and "message 0" not in sent and len(sent) <= 4
