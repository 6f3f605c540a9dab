"""A fixed slice of the real-model task suite on each profile's default thought mode.

Tasks of `bench.real_model_tasks` (one and two tool calls on the stock llama.cpp server,
``llamacpp:``; those and one needing no tool on ponder's grammar server, ``vllm:``),
temperature 0, with the thought mode each profile chooses. SmolLM2-135M is not asked to
be right; the runtime is asked not to spoil what it gets: no answer repeats ponder's
instruction text or markup, no tool result that was right turns into an answer that lacks
it, no request overflows the window, and consecutive requests of a run keep their
prompt's prefix (the floors sit well under what `bench.real_model_suite` measured).
"""

import asyncio
import json
import urllib.request
from collections.abc import Sequence

import pytest

from bench.real_model_runs import SuiteProxy, TaskRun, run_ponder, through_proxy
from bench.real_model_tasks import TASKS, Task
from ponder.models.capabilities import forget_learned
from ponder.testing.llama_server import GrammarServer, LlamaServer

STOCK_SLICE = [t for t in TASKS if t.id in {"mul", "caps"}]
"""The stock server takes about a minute a task on an idle CPU: two tasks with tool calls."""
GRAMMAR_SLICE = [t for t in TASKS if t.id in {"mul", "caps", "week"}]
PREFIX_FLOOR = {"llamacpp": 0.45, "vllm": 0.50}
"""Measured on the default mode: 0.59-0.61 (stock) and 0.66-0.68 (grammar) a run; the
last request of a run (the answer, tools changed) shares no prefix with the one before."""


def _runs(server: LlamaServer, profile: str, tasks: Sequence[Task]) -> list[TaskRun]:
    forget_learned()

    async def runner(proxy: SuiteProxy, url: str) -> list[TaskRun]:
        return await run_ponder(proxy, url, profile, "react", None, tasks=tasks)

    return asyncio.run(through_proxy(server, runner))


def _check(runs: Sequence[TaskRun], profile: str, tasks: Sequence[Task]) -> None:
    assert [run.task for run in runs] == [task.id for task in tasks]
    for run in runs:
        assert not run.error, run
        assert run.answer.strip(), run.task
        assert run.clean, (run.task, run.answer)
        assert not run.result_lost, (run.task, run.answer)
        assert all(e.status != 400 for e in run.exchanges), run.task
    shares = [s for run in runs for s in run.prefix_shares()]
    assert shares and sum(shares) / len(shares) >= PREFIX_FLOOR[profile]


def test_the_stock_server_on_the_llamacpp_default(server: LlamaServer) -> None:
    _check(_runs(server, "llamacpp", STOCK_SLICE), "llamacpp", STOCK_SLICE)


def test_the_grammar_server_on_the_vllm_default(grammar: GrammarServer) -> None:
    _check(_runs(grammar, "vllm", GRAMMAR_SLICE), "vllm", GRAMMAR_SLICE)


@pytest.mark.parametrize("choice", ["required", "named"])
def test_the_grammar_server_answers_a_forced_choice_with_a_call(
    grammar: GrammarServer, choice: str
) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "multiply",
                "description": "Multiply two integers.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                },
            },
        }
    ]
    forced = {"type": "function", "function": {"name": "multiply"}}
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "What is 17 times 23?"}],
        "tools": tools,
        "tool_choice": "required" if choice == "required" else forced,
        "temperature": 0,
        "max_tokens": 48,
    }
    sent = urllib.request.Request(
        grammar.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(sent, timeout=300) as answer:
        found = json.load(answer)
    call = found["choices"][0]["message"]["tool_calls"][0]["function"]
    assert found["choices"][0]["finish_reason"] == "tool_calls"
    assert call["name"] == "multiply"
    assert set(json.loads(call["arguments"])) == {"a", "b"}
    assert found["usage"]["prompt_tokens"] > 0
