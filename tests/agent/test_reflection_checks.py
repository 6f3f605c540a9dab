"""Reflection runs the spec's three checks every round, on the wire: one request when the
model gives all three, the missing ones asked for alone otherwise; any fail retries."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .scripts import of_kind

CHECKS = ("self_check", "contradiction_check", "completeness_check")
STOP = FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])
FORCED = {"type": "function", "function": {"name": "verify_reasoning"}}


def verdict(check: str, result: str = "pass", detail: str = "ok") -> FakeToolCall:
    args = {"check_type": check, "result": result, "detail": detail}
    return FakeToolCall(name="verify_reasoning", arguments=args)


def reflection_bodies(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        b
        for b in server.requests
        if [t["function"]["name"] for t in b.get("tools", [])] == ["verify_reasoning"]
    ]


async def run_with(script: list[Any], depth: int = 1) -> tuple[list[Any], FakeOpenAIServer]:
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:fake",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            enable_reflection=True,
            reflection_depth=depth,
        )
        events = [e async for e in agent.stream("q")]
        await agent.model.aclose()  # type: ignore[attr-defined]
    return events, server


async def test_all_three_checks_in_one_request() -> None:
    events, server = await run_with(
        [STOP, FakeReply(tool_calls=[verdict(c) for c in CHECKS]), "the answer"]
    )
    [body] = reflection_bodies(server)
    assert body["tool_choice"] == "required"
    assert all(c in body["messages"][-1]["content"] for c in CHECKS)
    shown = [(e.check_type, e.result, e.attempt) for e in of_kind(events, "reflection")]
    assert shown == [(c, "pass", 1) for c in CHECKS]
    assert of_kind(events, "run_finished")[0].output == "the answer"
    assert "must NOT call any tools" in server.requests[-1]["messages"][-1]["content"]


async def test_a_model_that_gives_one_check_per_reply_is_asked_for_the_others() -> None:
    script = [STOP, *(FakeReply(tool_calls=[verdict(c)]) for c in CHECKS), "the answer"]
    events, server = await run_with(script)
    first, *follow_ups = reflection_bodies(server)
    assert first["tool_choice"] == "required"
    assert [b["tool_choice"] for b in follow_ups] == [FORCED, FORCED]
    asked = [b["messages"][-1]["content"] for b in follow_ups]
    assert "contradiction_check" in asked[0] and "completeness_check" in asked[1]
    assert [e.check_type for e in of_kind(events, "reflection")] == list(CHECKS)
    assert of_kind(events, "run_finished")[0].output == "the answer"


async def test_a_warning_passes_and_a_fail_retries_until_the_depth() -> None:
    script = [
        STOP,
        FakeReply(
            tool_calls=[
                verdict("self_check", "warning", "shaky"),
                verdict("contradiction_check", "fail", "says 3 then 4"),
            ]
        ),
        STOP,  # after the correction, the model stops again: round 2
        FakeReply(tool_calls=[verdict(c) for c in CHECKS]),
        "fixed answer",
    ]
    events, server = await run_with(script, depth=2)
    bodies = reflection_bodies(server)
    assert len(bodies) == 2  # the fail ended round 1 without asking for completeness_check
    correction = server.requests[2]["messages"][-1]["content"]
    assert (
        "REFLECTION_CORRECTION" in correction and "contradiction_check: says 3 then 4" in correction
    )
    assert server.requests[2]["tool_choice"] == "required"
    attempts = [(e.result, e.attempt) for e in of_kind(events, "reflection")]
    assert attempts == [("warning", 1), ("fail", 1), ("pass", 2), ("pass", 2), ("pass", 2)]
    assert of_kind(events, "run_finished")[0].output == "fixed answer"


async def test_a_reply_without_any_verdict_counts_as_a_fail() -> None:
    script = [STOP, "no checks", "still none", "nothing", "none again", STOP, "answer anyway"]
    events, server = await run_with(script, depth=1)
    assert len(reflection_bodies(server)) == 4  # the batch, then each check forced
    assert "REFLECTION_CORRECTION" in server.requests[5]["messages"][-1]["content"]
    assert of_kind(events, "reflection") == []
    assert of_kind(events, "run_finished")[0].output == "answer anyway"
