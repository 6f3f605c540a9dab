"""A prompt longer than the model's window: learned from the provider, compacted, sent again.

The fake provider refuses an over-long prompt as real servers do (vLLM's and
llama-cpp-python's message, llama.cpp's ``exceed_context_size_error``, OpenAI's message
with no number, Anthropic's "prompt is too long"); runs go through the official SDKs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.events import Event
from ponder.exceptions import ContextOverflowError
from ponder.models.capabilities import forget_learned, learned_window
from ponder.models.windows import forget_probes
from ponder.testing import FakeOpenAIServer
from ponder.testing.fake_anthropic import FakeAnthropicServer
from ponder.testing.fake_openai import OverflowShape, prompt_tokens
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind

WINDOW = 2000
MAX_TOKENS = 100


@tool
def fetch(page: int) -> str:
    """Fetch a page of the report.

    Args:
        page: The page number.
    """
    return f"page {page}: " + "lorem ipsum dolor sit amet " * 80


def call(name: str, n: int, **arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, id=f"c{n}", arguments=arguments)])


def reading(pages: int) -> list[FakeReply]:
    """Fetch ``pages`` pages, stop, answer: each page adds about 600 prompt tokens."""
    fetches = [call("fetch", n, page=n) for n in range(pages)]
    return [*fetches, call("agent_stop", 99), FakeReply(content="The report says lorem.")]


@pytest.fixture(autouse=True)
def _fresh_windows() -> Iterator[None]:
    forget_learned()
    forget_probes()
    yield
    forget_learned()
    forget_probes()


def agent_for(
    server: FakeOpenAIServer, model: str = "openai:fake-model", tool: Any = fetch, **config: Any
) -> Agent:
    return Agent(
        model,
        tools=[tool],
        base_url=server.base_url,
        api_key="k",
        enable_thinking_tool=False,
        max_tokens=MAX_TOKENS,
        **{"agent_thought_mode": "chat", "context_strategy": "slide", **config},
    )


async def run(agent: Agent) -> tuple[Any, list[Event]]:
    stream = agent.stream("Read the report and say what it is about.")
    events = [event async for event in stream]
    return stream.result, events


def refused(server: FakeOpenAIServer) -> list[int]:
    """The indexes of the requests the server refused as too long."""
    return [
        i
        for i, body in enumerate(server.requests)
        if prompt_tokens(body) + (body.get("max_tokens") or 0) > WINDOW
    ]


@pytest.mark.parametrize("shape", ["vllm", "llamacpp", "bare"])
async def test_an_overflow_is_compacted_once_and_later_rounds_fit(shape: OverflowShape) -> None:
    script = reading(6)
    async with FakeOpenAIServer(script, context_window=WINDOW, overflow_shape=shape) as server:
        result, events = await run(agent_for(server))
    assert result.status == "completed" and result.output == "The report says lorem."
    # one refused request, answered after compaction; every later one fits
    assert len(refused(server)) == 1
    first = refused(server)[0]
    assert prompt_tokens(server.requests[first + 1]) < prompt_tokens(server.requests[first])
    assert of_kind(events, "compaction")
    assert len(server.requests) == len(script) + 1
    assert result.usage.requests == len(script)  # the refused request is not a request made
    if shape != "bare":  # the window was named: the next run of this model starts knowing it
        assert learned_window("openai:fake-model") == WINDOW


async def test_the_next_run_of_the_model_compacts_before_it_overflows() -> None:
    async with FakeOpenAIServer(reading(5), context_window=WINDOW) as server:
        first, _ = await run(agent_for(server))
        assert first.status == "completed" and len(refused(server)) == 1
        server.script = type(server.script)(reading(6))  # a new script, a new request log
        second, events = await run(agent_for(server))
    assert second.status == "completed" and second.output == "The report says lorem."
    assert refused(server) == []  # the second run never sent an over-long prompt
    assert of_kind(events, "compaction")


async def test_compact_mode_sends_a_summary_that_fits() -> None:
    replies = iter(reading(6))

    def answer(body: dict[str, Any]) -> FakeReply:
        if "BEGIN_OF_COMPACTION" in str(body["messages"][-1].get("content")):
            return FakeReply(content="The earlier pages are lorem ipsum.")
        return next(replies)

    async with FakeOpenAIServer(answer, context_window=WINDOW) as server:
        result, events = await run(agent_for(server, context_strategy="compact"))
    assert result.status == "completed" and result.output == "The report says lorem."
    assert of_kind(events, "compaction")[0].mode == "compact"
    answered = server.requests[refused(server)[0] + 2]  # refused, summary, sent again
    texts = [str(m.get("content")) for m in answered["messages"]]
    assert any("The earlier pages are lorem ipsum." in text for text in texts)
    assert len(refused(server)) == 1


@pytest.mark.parametrize("config", [{"enable_compaction": False}, {"context_strategy": "none"}])
async def test_with_compaction_off_the_overflow_fails_the_run_with_its_numbers(
    config: dict[str, Any],
) -> None:
    events: list[Event] = []
    async with FakeOpenAIServer(reading(6), context_window=WINDOW) as server:
        agent = agent_for(server, **config)
        agent.on_event()(events.append)
        with pytest.raises(ContextOverflowError):
            await agent.run("Read the report.")
    failed = of_kind(events, "run_failed")
    assert failed and "maximum context length is 2000 tokens" in failed[0].error
    assert len(refused(server)) == 1  # not retried: the same prompt would be refused again


async def test_an_overflow_through_the_python_api_raises_the_typed_error() -> None:
    async with FakeOpenAIServer(reading(6), context_window=WINDOW) as server:
        agent = agent_for(server, enable_compaction=False)
        with pytest.raises(ContextOverflowError) as caught:
            await agent.run("Read the report.")
    assert caught.value.limit == WINDOW and caught.value.status_code == 400
    assert caught.value.prompt_tokens is not None and caught.value.prompt_tokens > WINDOW // 2


async def test_an_overflow_is_not_taken_for_a_refused_feature() -> None:
    # a 400 about the prompt's size names no feature: nothing is degraded
    async with FakeOpenAIServer(reading(6), context_window=WINDOW) as server:
        result, events = await run(agent_for(server, agent_thought_mode="reasoning"))
    assert result.status == "completed"
    assert not of_kind(events, "model_degraded")
    assert any(body.get("tool_choice") == "required" for body in server.requests[-4:])


ANTHROPIC_REFUSALS = [
    "prompt is too long: 5210 tokens > 4096 maximum",
    "input length and `max_tokens` exceed context limit: 4000 + 100 > 4096, decrease input "
    "length or `max_tokens` and try again",
]


@pytest.mark.parametrize("message", ANTHROPIC_REFUSALS)
async def test_anthropic_says_prompt_is_too_long_and_the_run_compacts(message: str) -> None:
    script = reading(3)
    script.insert(2, FakeReply(status=400, error_message=message))
    async with FakeAnthropicServer(script) as server:
        agent = Agent(
            "anthropic:claude-fake",
            tools=[fetch],
            base_url=server.base_url,
            api_key="k",
            enable_thinking_tool=False,
            agent_thought_mode="chat",
            max_tokens=MAX_TOKENS,
            context_strategy="slide",
        )
        result, events = await run(agent)
    assert result.status == "completed" and result.output == "The report says lorem."
    assert of_kind(events, "compaction")
    assert learned_window("anthropic:claude-fake") == 4096
    after = server.requests[3]["messages"]
    before = server.requests[2]["messages"]
    assert len(after) < len(before)


@pytest.mark.parametrize("profile", ["llamacpp", "vllm", "lmstudio"])
async def test_a_local_server_that_states_its_window_is_never_sent_too_much(profile: str) -> None:
    script = reading(6)
    async with FakeOpenAIServer(script, context_window=WINDOW, states_window=True) as server:
        result, events = await run(agent_for(server, f"{profile}:fake-model"))
    assert result.status == "completed" and result.output == "The report says lorem."
    assert refused(server) == []  # asked first: compacted before any prompt overflowed
    assert of_kind(events, "compaction")
    assert learned_window(f"{profile}:fake-model") == WINDOW
    asked = [h for h in server.headers if h.get("authorization") == "Bearer k"]
    assert len(asked) == len(server.requests) + 1  # one question, then the chat requests


async def test_a_server_without_a_window_endpoint_is_asked_once_and_learns_by_refusal() -> None:
    async with FakeOpenAIServer(reading(5), context_window=WINDOW) as server:
        first, _ = await run(agent_for(server, "llamacpp:fake-model"))
        assert first.status == "completed" and len(refused(server)) == 1
        chats = len(server.requests)
        server.script = type(server.script)(reading(6))
        second, _ = await run(agent_for(server, "llamacpp:fake-model"))
        chats += len(server.requests)
    assert second.status == "completed" and refused(server) == []
    assert len(server.headers) == chats + 1  # /props asked once (404), never again
    assert learned_window("llamacpp:fake-model") == WINDOW


@tool
def dump(log: str) -> str:
    """Dump a whole log file.

    Args:
        log: The log's name.
    """
    return f"log {log}: " + "".join(f"line {n}: all quiet\n" for n in range(700))


def dumping() -> list[FakeReply]:
    """One tool result longer than the window, then stop and answer."""
    return [call("dump", 0, log="app"), call("agent_stop", 1), FakeReply(content="All quiet.")]


def cut_results(body: dict[str, Any]) -> list[str]:
    """The cut tool results a request sent (as tool messages, or user ones on llama.cpp)."""
    texts = [str(m.get("content")) for m in body["messages"]]
    return [text for text in texts if "characters cut to fit" in text]


async def test_a_tool_result_larger_than_the_window_is_cut_to_fit() -> None:
    async with FakeOpenAIServer(dumping(), context_window=WINDOW) as server:
        result, events = await run(agent_for(server, tool=dump))
    assert result.status == "completed" and result.output == "All quiet."
    assert len(refused(server)) == 1  # learned by the refusal, then every request fits
    resent = server.requests[refused(server)[0] + 1]
    (kept,) = cut_results(resent)
    assert [m["role"] for m in resent["messages"] if str(m["content"]) == kept] == ["tool"]
    assert kept.startswith("log app: line 0: all quiet")  # the beginning is kept
    cut, whole = map(int, re.findall(r"\[(\d+) of (\d+) characters cut", kept)[0])
    assert whole > 12_000 and 0 < cut < whole  # how much of the whole was cut
    assert [e.mode for e in of_kind(events, "compaction")] == ["trim"]
    finished = of_kind(events, "tool_call_finished")[0]
    assert "line 699" in finished.output  # what a UI shows stays whole


async def test_a_local_server_that_states_its_window_gets_the_cut_result_first() -> None:
    async with FakeOpenAIServer(dumping(), context_window=WINDOW, states_window=True) as server:
        result, _ = await run(agent_for(server, "llamacpp:fake-model", tool=dump))
    assert result.status == "completed" and refused(server) == []
    assert cut_results(server.requests[1])  # cut before it was ever sent


async def test_a_prompt_longer_than_the_window_alone_still_fails_with_its_numbers() -> None:
    async with FakeOpenAIServer(reading(1), context_window=WINDOW) as server:
        agent = agent_for(server)
        with pytest.raises(ContextOverflowError) as caught:
            await agent.run("Say what this is about: " + "lorem ipsum " * 2000)
    assert caught.value.limit == WINDOW


@tool
def shout(text: str) -> str:
    """Write a text in upper case.

    Args:
        text: The text.
    """
    return text.upper()


RUNAWAY = "hello world, " * 700
"""A tool argument that ran away (the stock llama.cpp server let one reach 6,800 tokens)."""


async def test_a_runaway_tool_argument_is_cut_to_fit_too() -> None:
    script = [
        call("shout", 0, text=RUNAWAY),
        call("agent_stop", 1),
        FakeReply(content="HELLO WORLD"),
    ]
    async with FakeOpenAIServer(script, context_window=WINDOW) as server:
        result, events = await run(agent_for(server, tool=shout))
    assert result.status == "completed" and result.output == "HELLO WORLD"
    assert len(refused(server)) == 1  # learned by the refusal, then every request fits
    resent = server.requests[refused(server)[0] + 1]
    (sent_call,) = [c for m in resent["messages"] for c in m.get("tool_calls") or []]
    arguments = json.loads(sent_call["function"]["arguments"])  # still a JSON object
    assert arguments["text"].startswith("hello world, hello world")
    assert "characters cut to fit" in arguments["text"] and len(arguments["text"]) < len(RUNAWAY)
    assert cut_results(resent)  # and the result, as long, is cut as well
    assert "trim" in [e.mode for e in of_kind(events, "compaction")]
    started = of_kind(events, "tool_call_started")[0]
    assert started.arguments["text"] == RUNAWAY  # what a UI showed stays whole


@tool
def accents(k: int) -> str:
    """Accented text (a tokenizer splits it finer than ponder's estimate does).

    Args:
        k: How much.
    """
    return "é" * 1500 * k


async def test_an_estimate_that_misses_in_proportion_cuts_by_the_counted_ratio() -> None:
    script = [call("accents", 0, k=1), call("agent_stop", 1), FakeReply(content="Done.")]
    async with FakeOpenAIServer(script, context_window=WINDOW) as server:
        result, events = await run(agent_for(server, tool=accents))
    assert result.status == "completed" and result.output == "Done."
    assert len(refused(server)) == 1  # refused once; the cut result fits from then on
    assert cut_results(server.requests[refused(server)[0] + 1])
    assert "trim" in [e.mode for e in of_kind(events, "compaction")]


RAN_AWAY = FakeReply(
    status=400,
    error_message=(
        "This model's maximum context length is 4096 tokens. However, you requested 4192 "
        "tokens (4096 in the messages, 96 in the completion). Please reduce the length of the "
        "messages or completion."
    ),
)
"""What the stock llama-cpp-python server answers when an automatic tool call it generates
without ``max_tokens`` fills the window: the grown prompt counted, clipped at the window."""


def asked_without_tools(body: dict[str, Any]) -> str:
    assert body["tool_choice"] == "none"
    return str(body["messages"][-1]["content"])


async def test_a_reply_that_ran_past_the_window_ends_in_an_answer_from_the_results() -> None:
    script = [call("fetch", 0, page=1), RAN_AWAY, FakeReply(content="Page 1 is lorem ipsum.")]
    async with FakeOpenAIServer(script) as server:
        result, events = await run(agent_for(server, "llamacpp:fake-model"))
    assert result.status == "completed" and result.output == "Page 1 is lorem ipsum."
    assert result.stop_reason == "context_overflow"
    assert len(server.requests) == 3  # the prompt that ran away is not cut nor sent again
    instruction = asked_without_tools(server.requests[2])
    assert "context window is full" in instruction and "fetch(page=1)" in instruction
    assert not of_kind(events, "compaction")  # the prompt fit: nothing was cut


async def test_when_the_answer_does_not_fit_either_the_results_are_the_answer() -> None:
    script = [call("fetch", 0, page=1), RAN_AWAY, RAN_AWAY]
    async with FakeOpenAIServer(script) as server:
        result, _ = await run(agent_for(server, "llamacpp:fake-model"))
    assert result.status == "completed" and result.stop_reason == "context_overflow"
    assert result.output.startswith("- fetch(page=1) → page 1: lorem ipsum")
    assert len(server.requests) == 3


async def test_a_first_request_that_runs_away_is_answered_without_tools() -> None:
    script = [RAN_AWAY, FakeReply(content="The report is about lorem ipsum.")]
    async with FakeOpenAIServer(script) as server:
        result, _ = await run(agent_for(server, "llamacpp:fake-model"))
    assert result.output == "The report is about lorem ipsum."
    assert result.stop_reason == "context_overflow"
    assert "context window is full" in asked_without_tools(server.requests[1])


async def test_with_compaction_off_a_reply_that_ran_away_fails_the_run() -> None:
    script = [call("fetch", 0, page=1), RAN_AWAY, FakeReply(content="unused")]
    async with FakeOpenAIServer(script) as server:
        agent = agent_for(server, "llamacpp:fake-model", enable_compaction=False)
        with pytest.raises(ContextOverflowError) as caught:
            await agent.run("Read the report.")
    assert caught.value.limit == 4096 and len(server.requests) == 2
