"""Step-driven ReAct: the agent plans a DAG of steps, then runs them in dependency order.

python examples/step_react.py              # OPENAI_API_KEY, or --model / --base-url
python examples/step_react.py --offline    # ponder's fake OpenAI server plays the model
"""

from __future__ import annotations

import json

from offline import arguments, call, provider
from ponder import Agent, tool
from ponder.testing import FakeReply

PRICES = {"apples": 3, "pears": 4}


@tool
def price(item: str) -> int:
    """The price of one item, in euros.

    Args:
        item: apples or pears.
    """
    return PRICES[item]


def plan(*steps: tuple[str, str, list[str]]) -> FakeReply:
    items = [{"id": i, "description": d, "depends_on": deps} for i, d, deps in steps]
    return FakeReply(
        content=json.dumps({"needs_decomposition": True, "reason": "two prices", "steps": items})
    )


def summary(text: str, *outputs: str) -> FakeReply:
    return FakeReply(content=json.dumps({"summary": text, "outputs": list(outputs)}))


SCRIPT = [
    plan(
        ("apples", "Find the price of apples", []),
        ("pears", "Find the price of pears", []),
        ("total", "Add both prices", ["apples", "pears"]),
    ),
    call("price", item="apples"),
    call("agent_stop", result="apples cost 3"),
    summary("Apples cost 3 euros.", "3"),
    call("price", item="pears"),
    call("agent_stop", result="pears cost 4"),
    summary("Pears cost 4 euros.", "4"),
    call("agent_stop", result="3 + 4 = 7"),
    summary("Together they cost 7 euros.", "7"),
    FakeReply(content="An apple and a pear cost 7 euros together."),
]


def main() -> None:
    """Print the plan, each step as it starts and ends, and the answer."""
    options = arguments(__doc__ or "")
    with provider(options, SCRIPT) as model:
        agent = Agent(
            **model,
            tools=[price],
            agent_workflow="step-react",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        for event in agent.stream_sync("What do an apple and a pear cost together?"):
            if event.kind == "plan_updated":
                print("plan:", ", ".join(str(step["id"]) for step in event.steps))
            elif event.kind == "step_started":
                print(f"step {event.index} of {event.total}: {event.step_id}")
            elif event.kind == "step_finished":
                print(f"  done: {event.summary}")
            elif event.kind == "run_finished":
                print(f"answer: {event.output}")


if __name__ == "__main__":
    main()
