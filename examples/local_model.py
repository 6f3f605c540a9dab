"""A local model: llama.cpp, Ollama, vLLM or LM Studio behind their OpenAI-compatible API.

ponder's provider profiles know what each server honours (llama-cpp-python's server, for
instance, ignores forced ``tool_choice``) and degrade requests to fit. Give the server's
URL; without one, ponder's fake OpenAI server stands in, with llama.cpp's quirks.

    python examples/local_model.py --model llamacpp:qwen2.5-7b --base-url http://127.0.0.1:8080/v1
    python examples/local_model.py --model ollama:llama3.2 --base-url http://127.0.0.1:11434/v1
    python examples/local_model.py     # no server: the fake one plays the model
"""

from __future__ import annotations

from offline import arguments, call
from ponder import Agent, tool
from ponder.testing import FakeOpenAIServer, FakeReply


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text.
    """
    return len(text.split())


SCRIPT = [
    call("think_and_reason", last_step="", summary="Count the words with the tool."),
    call("word_count", text="the quick brown fox"),
    call("think_and_reason", last_step="4 words", summary="Answer."),
    call("agent_stop", result="4"),
    FakeReply(content="The sentence has 4 words."),
]


def ask(agent: Agent) -> None:
    for event in agent.stream_sync("How many words are in 'the quick brown fox'?"):
        if event.kind == "model_degraded":
            print(f"degraded for this server: {event.feature}")
        elif event.kind == "tool_call_finished" and event.name == "word_count":
            print(f"tool {event.name} -> {event.output}")
        elif event.kind == "run_finished":
            print(f"answer: {event.output}")


def main() -> None:
    """Ask the local model (or the stand-in) a question that needs the tool."""
    options = arguments(__doc__ or "", default_model="llamacpp:local")
    if options.base_url and not options.offline:
        ask(Agent(options.model, tools=[word_count], base_url=options.base_url, api_key="local"))
        return
    with FakeOpenAIServer(SCRIPT, quirks=["ignore_tool_choice"]) as server:
        ask(Agent(options.model, tools=[word_count], base_url=server.base_url, api_key="local"))


if __name__ == "__main__":
    main()
