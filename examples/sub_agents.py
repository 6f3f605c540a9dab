"""Sub-agents: one agent as a tool of another, its run nested in the caller's.

Runs offline (``python examples/sub_agents.py``) on scripted models: the coordinator
hands a question to a researcher agent, whose events arrive nested under that call and
whose usage is added to the coordinator's.
"""

from __future__ import annotations

from ponder import Agent, UsageLimits
from ponder.models import ScriptedModel, call_tools, reply


def main() -> None:
    """Run the coordinator and show the researcher's nested events."""
    researcher = Agent(
        ScriptedModel([reply("The Eiffel Tower is 330 m tall.")], name="researcher-model"),
        instructions="Answers factual questions.",
        agent_strategy="no-action",
    )
    coordinator = Agent(
        ScriptedModel(
            [
                call_tools(("researcher", {"task": "How tall is the Eiffel Tower?"})),
                call_tools(("agent_stop", {"result": "have it"})),
                reply("It is 330 metres tall."),
            ]
        ),
        tools=[researcher.as_tool("researcher", limits=UsageLimits(requests=3))],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    stream = coordinator.stream_sync("How tall is the Eiffel Tower?")
    for event in stream:
        if event.kind == "sub_agent_event":
            print(f"  [{event.agent} / {event.call_id}] {event.event['kind']}")
        elif event.kind == "run_finished":
            print(event.output, f"({event.usage['requests']} requests in all)")


if __name__ == "__main__":
    main()
