"""``Agent.with_config``: a new agent for a new configuration, keeping what was given."""

from __future__ import annotations

from ponder.agent import Agent
from ponder.config import AgentConfig
from ponder.events import Event
from ponder.models import ScriptedModel, reply

from .scripts import multiply


async def test_with_config_keeps_tools_hooks_and_given_instructions() -> None:
    model = ScriptedModel([reply("one"), reply("two")])
    agent = Agent(model, tools=[multiply], instructions="Be brief.", agent_thought_mode="chat")
    seen: list[str] = []

    @agent.on_event("run_finished")
    async def record(event: Event) -> None:
        seen.append(event.run_id)

    changed = agent.with_config(agent.config.replace(agent_tool_call_limit=2))
    assert changed is not agent and changed.config.agent_tool_call_limit == 2
    assert agent.config.agent_tool_call_limit == 10  # the old agent keeps its own
    assert changed.instructions == "Be brief." and changed.model is model
    assert "multiply" in changed.tool_registry().names
    assert (await changed.run("hi")).output == "two"  # a text reply before agent_stop, twice
    assert len(seen) == 1  # the hooks are shared


def test_what_came_from_the_config_follows_the_new_one() -> None:
    agent = Agent(config=AgentConfig(model="scripted", instructions="Old."))
    changed = agent.with_config(AgentConfig(model="openai:gpt-4o-mini", instructions="New."))
    assert changed.instructions == "New."
    assert changed.config.model == "openai:gpt-4o-mini"
    assert changed.strategy_type is agent.strategy_type
    step = agent.with_config(AgentConfig(model="scripted", agent_workflow="step-react"))
    assert step.strategy_type.__name__ == "StepReActStrategy"
