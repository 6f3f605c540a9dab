"""A tool agent: two typed tools, the ReAct loop, and the events it streams.

python examples/tool_agent.py              # OPENAI_API_KEY, or --model / --base-url
python examples/tool_agent.py --offline    # ponder's fake OpenAI server plays the model
"""

from __future__ import annotations

from offline import arguments, call, provider
from ponder import Agent, tool
from ponder.testing import FakeReply


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


SCRIPT = [
    call("think_and_reason", last_step="", summary="Add first, then multiply."),
    call("add", a=2, b=3),
    call("think_and_reason", last_step="2 + 3 = 5", summary="Now multiply by 4."),
    call("multiply", a=5, b=4),
    call("think_and_reason", last_step="5 * 4 = 20", summary="I have the answer."),
    call("agent_stop", result="20"),
    FakeReply(content="(2 + 3) * 4 = 20"),
]


def main() -> None:
    """Run the agent and print its tool calls and answer."""
    options = arguments(__doc__ or "")
    with provider(options, SCRIPT) as model:
        agent = Agent(**model, tools=[add, multiply], instructions="Use the tools; be brief.")
        for event in agent.stream_sync("What is (2 + 3) * 4?"):
            if event.kind == "tool_call_finished":
                print(f"tool {event.name} -> {event.output}")
            elif event.kind == "run_finished":
                print(f"answer: {event.output}")


if __name__ == "__main__":
    main()
