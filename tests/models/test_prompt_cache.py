"""Prompt caching: Anthropic breakpoints on the wire, cached input counted and priced apart.

The fake Messages API keeps a prompt cache as Anthropic does (`PromptCache`): a request
reads the longest of its prefixes an earlier request marked with ``cache_control``. So the
cached tokens a run reports are what its wire format earned, not a scripted number.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from rich.console import Console

from ponder import Agent
from ponder.cli.render import render_view
from ponder.cli.view import RunView
from ponder.cost import request_cost
from ponder.models import Usage
from ponder.models.anthropic_wire import usage_from
from ponder.models.openai_response import usage_from as openai_usage_from
from ponder.testing import FakeAnthropicServer
from ponder.testing.prompt_cache import PromptCache
from ponder.tools import tool

PROMPT = "What is 17 times 23? Use the multiply tool."


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "think_and_reason", "arguments": {"summary": "multiply"}}]},
    {"tool_calls": [{"name": "multiply", "arguments": {"a": 17, "b": 23}}]},
    {"tool_calls": [{"name": "agent_stop", "arguments": {"result": "391"}}]},
    "17 times 23 is 391.",
]


def _breakpoints(body: dict[str, Any]) -> list[str]:
    found = [f"tool:{t['name']}" for t in body.get("tools", ()) if "cache_control" in t]
    found += ["system" for b in body.get("system", ()) if "cache_control" in b]
    for n, turn in enumerate(body["messages"]):
        found += [f"message:{n}" for b in turn["content"] if "cache_control" in b]
    return found


def test_every_anthropic_request_marks_tools_system_and_history() -> None:
    with FakeAnthropicServer(SCRIPT) as server:
        agent = Agent(
            "anthropic:claude-3-5-haiku-latest",
            tools=[multiply],
            base_url=server.base_url,
            api_key="k",
            instructions="Be brief.",
            agent_thought_mode="reasoning",
            enable_thinking_tool=False,
        )
        events = list(agent.stream_sync(PROMPT))
        bodies = server.requests
    finished = next(e for e in events if e.kind == "run_finished")
    assert finished.output == "17 times 23 is 391."
    for body in bodies:
        marks = _breakpoints(body)
        assert len(marks) <= 4  # Anthropic's limit
        assert marks[0] == f"tool:{body['tools'][-1]['name']}" and "system" in marks
        assert marks[-1] == f"message:{len(body['messages']) - 1}"
    usage = [e for e in events if e.kind == "usage"]
    cached = [e.cached_input_tokens for e in usage]
    assert cached[0] == 0 and all(b > a for a, b in itertools.pairwise(cached))
    total = finished.usage
    assert total["cached_input_tokens"] == cached[-1] < total["input_tokens"]
    # the cost prices the cached tokens at the cached rate
    whole = Usage(**{k: v for k, v in total.items() if k != "cached_input_tokens"})
    full_price = request_cost("anthropic:claude-3-5-haiku-latest", whole)
    if full_price is not None:  # genai-prices installed
        assert finished.cost is not None and finished.cost < full_price


def test_the_cache_reads_only_a_byte_stable_marked_prefix() -> None:
    cache = PromptCache()
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    first = {"system": system, "messages": [{"role": "user", "content": "hi"}]}
    assert cache.read(first) == 0
    again = {"system": [{"type": "text", "text": "Be brief."}], "messages": []}
    assert cache.read(again) == 0  # no breakpoint: no cache
    grown = {"system": system, "messages": [{"role": "user", "content": "hi there"}]}
    assert 0 < cache.read(grown)  # the system prompt's prefix
    changed = {**first, "system": [{**system[0], "text": "Be brief!"}]}
    assert cache.read(changed) == 0


def test_cached_tokens_are_read_from_both_providers_usage() -> None:
    anthropic = usage_from(
        {
            "input_tokens": 10,
            "cache_read_input_tokens": 90,
            "cache_creation_input_tokens": 5,
            "output_tokens": 3,
        }
    )
    assert (anthropic.input_tokens, anthropic.cached_input_tokens) == (105, 90)
    details = {"cached_tokens": 64}
    openai = openai_usage_from(
        {"prompt_tokens": 100, "completion_tokens": 3, "prompt_tokens_details": details}
    )
    assert (openai.input_tokens, openai.cached_input_tokens) == (100, 64)
    assert (anthropic + openai).cached_input_tokens == 154


@pytest.mark.parametrize(
    "details", [None, "cached", {"cached_tokens": "many"}, {"cached_tokens": -3}, []]
)
def test_malformed_cached_counts_are_no_cached_tokens(details: Any) -> None:
    usage = openai_usage_from({"prompt_tokens": 5, "prompt_tokens_details": details})
    assert (usage.input_tokens, usage.cached_input_tokens) == (5, 0)


def test_a_cached_count_beyond_the_prompt_is_capped() -> None:
    details = {"cached_tokens": 500}
    usage = openai_usage_from({"prompt_tokens": 100, "prompt_tokens_details": details})
    assert usage.cached_input_tokens == 100


def test_the_cli_shows_cached_tokens() -> None:
    view = RunView()
    view.usage = {
        "requests": 2,
        "input_tokens": 1200,
        "output_tokens": 30,
        "cached_input_tokens": 1000,
    }
    console = Console(record=True, width=200)
    console.print(render_view(view))
    assert "in 1,200 (1,000 cached) · out 30" in console.export_text()


def test_the_answer_asked_with_tools_off_reads_the_tool_loops_cached_prefix() -> None:
    with FakeAnthropicServer(SCRIPT) as server:
        agent = Agent(
            "anthropic:claude-3-5-haiku-latest",
            tools=[multiply],
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="reasoning",
            enable_thinking_tool=False,
            agent_tool_call_limit=1,  # the answer comes after the limit, tools off
        )
        events = list(agent.stream_sync(PROMPT))
        bodies = server.requests
    answer = bodies[-1]
    assert answer["tool_choice"] == {"type": "none"}
    assert [t["name"] for t in answer["tools"]] == [t["name"] for t in bodies[-2]["tools"]]
    assert _breakpoints(answer)[0] == f"tool:{answer['tools'][-1]['name']}"
    cached = [e.cached_input_tokens for e in events if e.kind == "usage"]
    assert cached[-1] > cached[-2]  # the whole earlier prompt came from the cache
