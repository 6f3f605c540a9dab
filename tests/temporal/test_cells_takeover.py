"""Cells of the Temporal matrix where another worker takes the run up mid-run.

The run starts on one worker, which stops while the feature is in play (a model request
held by the fake provider, or a question the run waits on); a second worker, with its own
agent, replays the history and finishes the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from temporalio.client import Client

from ponder.agent import Agent, RunResult
from ponder.agent.launch import Prompt
from ponder.events import Event
from ponder.exceptions import ModelHTTPError
from ponder.models import ScriptedModel, resolve_model
from ponder.temporal import TemporalAgent, build_worker
from ponder.testing import FakeOpenAIServer, FakeReply
from ponder.testing.script import FakeToolCall
from tests.cli.test_commands import agent_script
from tests.mcp.test_client_features import agent_for, calling
from tests.temporal.test_runs import assert_replays

HELD = 60.0
"""Seconds the fake provider holds the request the first worker is stopped in."""


def call(name: str, **arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])


def held() -> FakeReply:
    """A reply the first worker never gets: it is stopped while the provider holds it."""
    return FakeReply(content="never seen", delay=HELD)


async def wait_for_requests(provider: FakeOpenAIServer, count: int) -> None:
    async with asyncio.timeout(60):
        while len(provider.requests) < count:
            await asyncio.sleep(0.05)


async def taken_over(
    client: Client,
    task_queue: str,
    make: Callable[[], Agent],
    provider: FakeOpenAIServer,
    held_request: int,
    prompt: Prompt = "q",
) -> tuple[RunResult, list[Event]]:
    """Run ``make()`` on a worker stopped in request ``held_request`` (from 1); another ends it."""
    remote = TemporalAgent(client, task_queue, heartbeat_timeout=2)
    async with build_worker(client, task_queue, make()):
        run_id = await remote.start(prompt)
        await wait_for_requests(provider, held_request)
    async with build_worker(client, task_queue, make()):
        async with asyncio.timeout(120):
            result = await remote.result(run_id)
        events = await remote.events(run_id)
        await assert_replays(client, run_id)
    return result, events


def of_kind(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def openai_agent(provider: FakeOpenAIServer, **options: Any) -> Agent:
    return Agent("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k", **options)


CHECKS = ("self_check", "contradiction_check", "completeness_check")


@pytest.mark.timeout(240)
async def test_a_worker_stopped_while_reflection_is_asked_leaves_it_to_the_next(
    client: Client, task_queue: str
) -> None:
    verdicts = FakeReply(
        tool_calls=[
            FakeToolCall(
                name="verify_reasoning",
                arguments={"check_type": c, "result": "pass", "detail": "ok"},
            )
            for c in CHECKS
        ]
    )
    script = [call("agent_stop", result="done"), held(), verdicts, FakeReply(content="Checked.")]
    with FakeOpenAIServer(script) as provider:

        def make() -> Agent:
            return openai_agent(
                provider,
                agent_thought_mode="chat",
                enable_thinking_tool=False,
                enable_reflection=True,
            )

        result, events = await taken_over(client, task_queue, make, provider, held_request=2)
        sent = provider.requests
    assert (result.status, result.output) == ("completed", "Checked.")
    shown = [(e.check_type, e.result, e.attempt) for e in of_kind(events, "reflection")]
    assert shown == [(c, "pass", 1) for c in CHECKS]  # the held request counts for nothing
    assert len(sent) == 4 and sent[1]["messages"] == sent[2]["messages"]  # asked again, as is
    assert result.usage.requests == 3


@pytest.mark.timeout(240)
async def test_a_worker_stopped_after_a_fallback_leaves_the_next_model_to_answer(
    client: Client, task_queue: str
) -> None:
    script = [call("agent_stop", result="ok"), held(), FakeReply(content="From the backup.")]
    with FakeOpenAIServer(script) as provider:

        def make() -> Agent:
            def down(request: Any) -> Any:
                raise ModelHTTPError(503, "overloaded", model_name="primary")

            primary = ScriptedModel(down, name="primary")
            backup = resolve_model("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k")
            return Agent([primary, backup], agent_thought_mode="chat", enable_thinking_tool=False)

        result, events = await taken_over(client, task_queue, make, provider, held_request=2)
        answered = len(provider.requests)
    assert (result.status, result.output) == ("completed", "From the backup.")
    fell = [(e.failed, e.answered_by) for e in of_kind(events, "model_fallback")]
    assert fell == [("primary", "openai:gpt-4o-mini")] * 2  # one per answered request
    assert answered == 3  # the backup: the first request, the held one, and its retry
    assert result.usage.requests == 2


@pytest.mark.timeout(240)
async def test_a_run_taken_up_by_another_worker_costs_each_request_once(
    client: Client, task_queue: str
) -> None:
    with FakeOpenAIServer(agent_script()) as provider:
        local = await openai_agent(provider).run("q")
    script = agent_script()
    script.insert(2, held())  # the third request: after two have been spent
    with FakeOpenAIServer(script) as provider:
        result, events = await taken_over(
            client, task_queue, lambda: openai_agent(provider), provider, held_request=3
        )
        sent = len(provider.requests)
    assert sent == len(script)  # the held request was sent again, by the second worker
    assert result.status == "completed" and result.output == local.output
    assert local.cost is not None and local.cost > 0
    assert result.cost == pytest.approx(local.cost)  # the held request is not in it
    assert result.usage == local.usage
    usages = [e.cost for e in of_kind(events, "usage")]
    assert usages[-1] == pytest.approx(local.cost)
    assert events[-1].kind == "run_finished" and events[-1].cost == pytest.approx(local.cost)


@pytest.mark.timeout(240)
async def test_a_question_pending_when_its_worker_stops_is_answered_once_on_the_next(
    client: Client, task_queue: str
) -> None:
    remote = TemporalAgent(client, task_queue)
    async with agent_for(calling(("ask_contact", {}))) as first:
        async with build_worker(client, task_queue, first):
            waiting = await remote.run("add a contact")
    assert waiting.status == "suspended" and waiting.suspension is not None
    [question] = waiting.suspension["payload"]["elicitations"]
    assert question["message"] == "Who should I add?"
    async with agent_for(calling(("ask_contact", {}))) as second:
        async with build_worker(client, task_queue, second):
            answer = {"action": "accept", "content": {"name": "Ada", "age": 36}}
            assert await remote.decide(waiting.run_id, {question["id"]: answer})
            done = await remote.result(waiting.run_id)
            events = await remote.events(waiting.run_id)
            await assert_replays(client, waiting.run_id)
    assert (done.status, done.text) == ("completed", "added Ada (36)")
    assert [e.reason for e in of_kind(events, "run_suspended")] == ["elicitation"]
    assert len(of_kind(events, "run_resumed")) == 1
    asked = [e.output for e in of_kind(events, "tool_call_finished") if e.name == "ask_contact"]
    assert asked == ["added Ada (36)"]  # the held call left no result; the answered one did
