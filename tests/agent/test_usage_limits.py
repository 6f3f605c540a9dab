"""``run(limits=UsageLimits(...))``: per-run bounds that end the loop with an answer."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.agent import UsageLimits
from ponder.exceptions import UserError
from ponder.messages import UserMessage
from ponder.models import ScriptedModel, Usage, call_tools, reply
from ponder.store import open_store

from .scripts import PROMPT, make_agent, of_kind, think


def _calls(n: int) -> list[Any]:
    return [call_tools(("multiply", {"a": i, "b": 2})) for i in range(1, n + 1)]


async def test_the_request_limit_keeps_one_request_for_the_answer() -> None:
    model = ScriptedModel([*_calls(2), reply("Products so far: 2 and 4.")])
    agent = make_agent(model, agent_thought_mode="chat")
    stream = agent.stream(PROMPT, limits=UsageLimits(requests=3))
    events = [e async for e in stream]
    result = stream.result
    assert len(model.requests) == 3 and result.usage.requests == 3
    assert result.stop_reason == "requests_limit"
    assert result.output == "Products so far: 2 and 4."
    reached = of_kind(events, "limit_reached")
    assert [(e.limit, e.value) for e in reached] == [("requests", 3)]
    final = model.requests[-1]
    assert final.tools == () and final.tool_choice == "none"
    instruction = final.messages[-1]
    assert isinstance(instruction, UserMessage)
    assert "3 requests" in instruction.content and "multiply(a=1, b=2) → 2" in instruction.content


@pytest.mark.parametrize(
    ("limits", "name", "reason"),
    [
        (UsageLimits(input_tokens=150), "input_tokens", "input_tokens_limit"),
        (UsageLimits(output_tokens=25), "output_tokens", "output_tokens_limit"),
        (UsageLimits(total_tokens=170), "total_tokens", "total_tokens_limit"),
    ],
)
async def test_token_limits_end_the_loop(limits: UsageLimits, name: str, reason: str) -> None:
    used = Usage(requests=1, input_tokens=100, output_tokens=20)
    script = [c.model_copy(update={"usage": used}) for c in _calls(2)]
    model = ScriptedModel([*script, reply("Answer from what I have.")])
    stream = make_agent(model, agent_thought_mode="chat").stream(PROMPT, limits=limits)
    events = [e async for e in stream]
    assert stream.result.stop_reason == reason
    assert len(model.requests) == 3  # two rounds reach every bound above, then the answer
    assert [e.limit for e in of_kind(events, "limit_reached")] == [name]


async def test_the_tool_call_limit_counts_action_calls_not_thinking() -> None:
    model = ScriptedModel([think("go"), *_calls(1), reply("One product: 2.")])
    agent = make_agent(model, agent_thought_mode="reasoning-required")
    result = await agent.run(PROMPT, limits=UsageLimits(tool_calls=1))
    assert result.tool_calls == 1 and result.stop_reason == "call_limit"
    assert result.output == "One product: 2."


async def test_limits_are_kept_with_a_stored_run(tmp_path: Any) -> None:
    from ponder.tools import tool

    @tool(requires_approval=True)
    def deploy(target: str) -> str:
        """Deploy.

        Args:
            target: Where to.
        """
        return "ok"

    store = open_store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    script = [call_tools(("deploy", {"target": "a"})), *_calls(1), reply("Stopped early.")]
    from ponder.agent import Agent

    def agent(model: ScriptedModel) -> Agent:
        return Agent(model, tools=[deploy], store=store, agent_thought_mode="chat")

    first = await agent(ScriptedModel(script)).run("go", limits=UsageLimits(requests=3))
    assert first.status == "suspended"
    later = ScriptedModel(script[1:])
    done = await agent(later).resume(first.run_id, "approve")
    assert done.stop_reason == "requests_limit" and done.usage.requests == 3
    assert done.output == "Stopped early."


@pytest.mark.parametrize(
    "bad", [{"requests": 0}, {"total_tokens": -5}, {"tokens": 10}, {"requests": "many"}]
)
def test_bad_limits_are_refused_naming_the_field(bad: dict[str, Any]) -> None:
    with pytest.raises(UserError, match=f"UsageLimits {next(iter(bad))}="):
        UsageLimits(**bad)


async def test_limits_that_are_no_usage_limits_are_refused_before_a_request() -> None:
    model = ScriptedModel([reply("x")])
    with pytest.raises(UserError, match="limits must be UsageLimits"):
        await make_agent(model).run(PROMPT, limits={"requests": 2})  # type: ignore[call-overload]
    assert model.requests == []


async def test_step_react_ends_on_a_usage_limit_with_an_answer() -> None:
    from .steps import lookup, no_plan, step_agent

    assert lookup.name == "lookup"
    model = ScriptedModel(
        [no_plan(), call_tools(("lookup", {"key": "k"})), reply("k is value of k.")]
    )
    result = await step_agent(model).run("What is k?", limits=UsageLimits(requests=3))
    assert result.stop_reason == "requests_limit" and result.output == "k is value of k."
    assert result.usage.requests == 3
