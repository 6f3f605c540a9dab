"""Bad tool calls, failing tools, hooks, concurrency: the run goes on and nothing leaks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ponder.agent import Agent, ModelCall
from ponder.events import Event
from ponder.exceptions import ModelResponseError
from ponder.messages import SystemMessage, ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.tools import tool

from .scripts import of_kind, stop


@tool
def ok(n: int) -> str:
    """Return ok-n.

    Args:
        n: A number.
    """
    return f"ok-{n}"


@tool
def broken(n: int) -> str:
    """Always fails.

    Args:
        n: A number.
    """
    raise ValueError(f"broken {n}")


def agent_for(model: ScriptedModel, **config: Any) -> Agent:
    return Agent(
        model, tools=[ok, broken], agent_thought_mode="chat", enable_thinking_tool=False, **config
    )


async def test_a_failing_tool_in_a_parallel_batch_keeps_its_siblings() -> None:
    batch = call_tools(("ok", {"n": 1}), ("broken", {"n": 2}), ("ok", {"n": 3}))
    model = ScriptedModel([batch, stop(), reply("two of three")])
    events = [e async for e in agent_for(model).stream("go")]
    results = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert [(m.content, m.is_error) for m in results] == [
        ("ok-1", False),
        ("Error: ValueError: broken 2", True),
        ("ok-3", False),
    ]
    failed = of_kind(events, "tool_call_failed")
    assert [(e.name, e.status) for e in failed] == [("broken", "error")]
    assert of_kind(events, "run_finished")[0].output == "two of three"


async def test_malformed_tool_calls_are_answered_and_the_run_goes_on() -> None:
    model = ScriptedModel(
        [
            call_tools(
                ("ok", '{"n": 1,'),
                ("ok", {"n": "x"}),
                ("nope", {}),
                ("think_and_reason", {"summary": ""}),
            ),
            stop(),
            reply("recovered"),
        ]
    )
    agent = Agent(model, tools=[ok], agent_thought_mode="inline", enable_thinking_tool=False)
    result = await agent.run("go")
    results = [m for m in result.messages if isinstance(m, ToolMessage)][:4]
    assert all(m.is_error for m in results)
    assert results[0].content == "ok-1" or "n" in results[0].content
    assert "n: expected an integer" in results[1].content
    assert "unknown tool" in results[2].content.lower()
    assert "summary: must not be empty" in results[3].content
    assert result.output == "recovered"


async def test_precompletion_hook_edits_the_messages_sent() -> None:
    model = ScriptedModel([reply("hi")])
    agent = Agent(model, agent_strategy="no-action")
    seen: list[str] = []

    @agent.on_precompletion()
    def add_context(call: ModelCall) -> None:
        call.messages.insert(0, SystemMessage(content="Today is Monday."))
        seen.append(call.purpose)

    @agent.on_completion()
    def shout(call: ModelCall, response: ModelResponse) -> ModelResponse:
        return reply(response.text.upper())

    result = await agent.run("hello")
    assert seen == ["chat"]
    assert model.requests[0].messages[0] == SystemMessage(content="Today is Monday.")
    assert result.output == "HI"
    assert SystemMessage(content="Today is Monday.") not in result.messages


async def test_event_hooks_run_by_priority_and_block_stops_lower_ones() -> None:
    model = ScriptedModel([call_tools(("ok", {"n": 1})), stop(), reply("done")])
    agent = agent_for(model)
    calls: list[str] = []

    @agent.on_event("tool_call_finished", priority=2)
    async def second(event: Event) -> None:
        calls.append("second")

    @agent.on_event("tool_call_finished", priority=1, block=True)
    def first(event: Event) -> None:
        calls.append("first")

    @agent.on_event("*")
    def every(event: Event) -> None:
        calls.append(event.kind)

    await agent.run("go")
    assert calls.count("first") == 1 and "second" not in calls
    assert calls[0] == "run_started" and calls[-1] == "run_finished"


async def test_a_failing_model_surfaces_a_typed_error_with_a_failed_event() -> None:
    model = ScriptedModel([])
    agent = agent_for(model)
    events: list[Event] = []
    agent.on_event("*")(events.append)
    with pytest.raises(ModelResponseError, match="out of script"):
        await agent.run("go")
    assert events[-1].kind == "run_failed"


async def test_hundred_concurrent_runs_keep_their_thinking_apart() -> None:
    def history_driven(request: ModelRequest) -> ModelResponse:
        user = next(m for m in request.messages if m.kind == "user").content
        done = sum(1 for m in request.messages if isinstance(m, ToolMessage))
        if done < 2:
            return call_tools(
                (
                    "sequential_thinking",
                    {
                        "thought": f"{user} thought {done + 1}",
                        "thought_number": done + 1,
                        "total_thoughts": 2,
                        "next_thought_needed": done == 0,
                    },
                )
            )
        if done == 2:
            return call_tools(("agent_stop", {}))
        return reply(f"answer for {user}")

    model = ScriptedModel(history_driven)
    agent = Agent(model, agent_thought_mode="chat")
    results = await asyncio.gather(*(agent.run(f"task-{i}") for i in range(100)))
    for i, result in enumerate(results):
        assert result.output == f"answer for task-{i}"
        thoughts = [
            m
            for m in result.messages
            if isinstance(m, ToolMessage) and m.name == "sequential_thinking"
        ]
        assert [m.data["thought_history_length"] for m in thoughts] == [1, 2]
        assert all(m.data["thought"].startswith(f"task-{i} ") for m in thoughts)


async def test_leaving_a_stream_early_cancels_the_run_and_saves_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ponder.store import SQLiteStore

    @tool
    async def slow(n: int) -> str:
        """Take a while.

        Args:
            n: A number.
        """
        await asyncio.sleep(30)
        return "late"

    store = SQLiteStore(tmp_path / "runs.sqlite3")
    model = ScriptedModel([call_tools(("slow", {"n": 1}))])
    agent = Agent(
        model, tools=[slow], agent_thought_mode="chat", enable_thinking_tool=False, store=store
    )
    stream = agent.stream("go")
    seen: list[str] = []
    cancelled: list[Event] = []
    agent.on_event("run_cancelled")(cancelled.append)
    async for event in stream:
        seen.append(event.kind)
        if event.kind == "tool_call_started":
            break
    await asyncio.sleep(0.05)
    assert "tool_call_started" in seen
    records = await store.list_runs()
    assert [r.status for r in records] == ["cancelled"]
    assert len(cancelled) == 1


async def test_a_tools_concurrency_limit_holds_across_runs_of_one_agent() -> None:
    running = 0
    peak = 0

    @tool(max_concurrency=2)
    async def scarce(n: int) -> str:
        """Use a scarce resource.

        Args:
            n: A number.
        """
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return "ok"

    def script(request: ModelRequest) -> ModelResponse:
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        if done == 0:
            return call_tools(("scarce", {"n": 1}), ("scarce", {"n": 2}))
        return call_tools(("agent_stop", {})) if done == 2 else reply("done")

    agent = Agent(
        ScriptedModel(script), tools=[scarce], agent_thought_mode="chat", enable_thinking_tool=False
    )
    results = await asyncio.gather(*(agent.run(f"r{i}") for i in range(5)))
    assert all(r.output == "done" for r in results)
    assert peak == 2


async def test_long_tool_output_is_cut_for_the_model_and_kept_whole_in_the_ledger() -> None:
    @tool
    def dump(n: int) -> str:
        """Return a long text.

        Args:
            n: How many characters.
        """
        return "x" * n

    model = ScriptedModel([call_tools(("dump", {"n": 50_000})), stop(), reply("seen")])
    agent = Agent(
        model,
        tools=[dump],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        tool_output_max_chars=1000,
    )
    result = await agent.run("dump")
    sent = next(m for m in model.requests[1].messages if isinstance(m, ToolMessage))
    assert len(sent.content) < 1200 and "cut" in sent.content
    kept = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert kept.data == "x" * 50_000


async def test_a_finished_run_leaves_no_cyclic_garbage() -> None:
    import gc

    model = ScriptedModel([call_tools(("ok", {"n": 1})), stop(), reply("done")] * 2)
    agent = agent_for(model)
    await agent.run("warm up")
    gc.collect()
    gc.disable()
    try:
        result = await agent.run("go")
        del result
        assert gc.collect() == 0
    finally:
        gc.enable()
