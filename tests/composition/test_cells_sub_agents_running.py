"""The matrix's column for a run inside a sub-agent, continued: a grandchild, the child's
model (HTTP, fallback, priced), recording, tracing, and a question the child's MCP server
asks, seen from the parent's caller."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import ModelHTTPError, UserError
from ponder.models import ModelRequest, ScriptedModel, Usage, call_tools, reply
from ponder.replay import ReplayModel, load_cassette
from ponder.store import open_store
from ponder.testing import FakeOpenAIServer
from tests.mcp.test_client_features import agent_for, calling

from .support import of_kind
from .test_cells_media_tracing import exporter_and_settings
from .test_cells_sub_agents import (
    PLAIN,
    STOP,
    child_of,
    helper_results,
    nested,
    parent_of,
    streamed,
)


def _down(request: ModelRequest) -> Any:
    raise ModelHTTPError(503, "overloaded", model_name="primary")


async def test_a_grandchild_runs_nested_twice_and_its_usage_rolls_up_to_the_top() -> None:
    """A child's own sub-agent runs nested in the child, whose events carry it to the
    parent's stream; it is stored under the child's run id, and every request counts in
    the parent's usage."""
    store = open_store("memory:")
    used = Usage(requests=1, input_tokens=30, output_tokens=1)
    grandchild = child_of(reply("grandchild says 3", usage=used))
    child_model = ScriptedModel(
        [call_tools(("finder", {"task": "Find."}, "g1")), STOP, reply("child says 3")]
    )
    child = Agent(child_model, tools=[grandchild.as_tool("finder", "Finds.")], **PLAIN)
    parent = parent_of(child, reply("It is 3."), store=store)
    result, events = await streamed(parent)
    assert result.output == "It is 3." and helper_results(result) == ["child says 3"]
    inner = [e["event"]["kind"] for e in nested(events, "sub_agent_event")]
    assert inner[0] == "run_started" and "run_finished" in inner
    stored = await store.load(f"{result.run_id}.c1.g1")
    assert stored.record.status == "completed"
    parent_requests = len(parent.model.requests)  # type: ignore[attr-defined]
    assert result.usage.requests == parent_requests + len(child_model.requests) + 1
    assert result.usage.input_tokens >= 30


HTTP_CHILD = textwrap.dedent(
    """
    import asyncio, gc
    from ponder.agent import Agent
    from ponder.models import ScriptedModel, call_tools, reply
    from ponder.testing import FakeOpenAIServer

    call = call_tools(("helper", {"task": "t"}))
    stop = call_tools(("agent_stop", {"result": "r"}))
    with FakeOpenAIServer(["one", "two", "three"]) as server:
        child = Agent("openai:fake", base_url=server.base_url, api_key="k",
                      tool_calling_mode="none")
        parent = Agent(ScriptedModel([call, stop, reply("done")] * 3),
                       tools=[child.as_tool("helper", "Helps.")],
                       agent_thought_mode="chat", enable_thinking_tool=False)
        outputs = []
        for _ in range(3):
            result = asyncio.run(parent.run("go"))
            outputs += [m.content for m in result.messages
                        if m.kind == "tool" and m.name == "helper"]
            gc.collect()
        print(outputs)
    """
)


def test_a_childs_http_model_under_several_asyncio_runs_leaves_no_noise(tmp_path: Path) -> None:
    """A child on an HTTP model, called by a parent run under ``asyncio.run`` three times:
    each call is answered over HTTP, and each loop's client closes with its loop."""
    script = tmp_path / "script.py"
    script.write_text(HTTP_CHILD)
    done = subprocess.run(
        [sys.executable, "-W", "always", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['one', 'two', 'three']"
    for noise in ("Event loop is closed", "never retrieved", "Traceback", "unclosed"):
        assert noise not in done.stderr


async def test_a_childs_fallback_model_answers_and_the_parent_hears_which() -> None:
    """A child on a fallback model: the backup answers while the primary is down, and the
    ``model_fallback`` event reaches the parent's stream nested under the call."""
    backup = ScriptedModel([reply("From the backup.")], name="backup")
    child = Agent([ScriptedModel(_down, name="primary"), backup], agent_strategy="no-action")
    result, events = await streamed(parent_of(child, reply("Done.")))
    fell = [(e["failed"], e["answered_by"]) for e in nested(events, "model_fallback")]
    assert fell == [("primary", "backup")]
    assert helper_results(result) == ["From the backup."]


async def test_a_recorded_parent_replays_its_childs_answer_without_the_child(
    tmp_path: Path,
) -> None:
    """The parent's cassette holds the child's call with its result; replaying the parent
    gives the child's recorded answer again without running the child."""
    path = tmp_path / "parent.json"
    first = await parent_of(child_of(reply("child answer")), reply("ok"), record=path).run("go")
    [call] = load_cassette(path).tool_calls
    assert (call.name, call.result.output) == ("helper", "child answer")
    idle = ScriptedModel([], name="child")  # fails the replay if the child runs
    replayer = Agent(ReplayModel(path), tools=[Agent(idle).as_tool("helper", "Helps.")], **PLAIN)
    again = await replayer.run("go")
    assert again.output == first.output == "ok"
    assert helper_results(again) == ["child answer"] and idle.requests == []


async def test_a_recording_child_writes_its_own_cassette_that_replays_alone(
    tmp_path: Path,
) -> None:
    """A child agent with ``record=`` records each of its runs, its task as the prompt;
    that cassette replays the child on its own."""
    path = tmp_path / "child.json"
    child = child_of(reply("child answer"), agent_strategy="no-action", record=path)
    await parent_of(child, reply("ok")).run("go")
    cassette = load_cassette(path)
    assert (cassette.prompt, cassette.output) == ("Do it.", "child answer")
    again = await Agent(ReplayModel(cassette), agent_strategy="no-action").run("Do it.")
    assert again.output == "child answer"


async def test_the_price_of_a_childs_requests_is_part_of_the_parents() -> None:
    """A child on a priced model: its usage events carry their price, and the parent's
    price (its own model is unpriced) is the child's."""
    async with FakeOpenAIServer(["child answer"]) as server:
        child = Agent(
            "openai:gpt-4o-mini",
            base_url=server.base_url,
            api_key="k",
            agent_strategy="no-action",
        )
        result, events = await streamed(parent_of(child, reply("ok")))
    [usage] = nested(events, "usage")
    assert usage["cost"] is not None and usage["cost"] > 0
    assert result.cost == pytest.approx(usage["cost"])
    assert of_kind(events, "run_finished")[0].cost == pytest.approx(usage["cost"])


async def test_a_childs_spans_nest_under_the_parents_tool_span() -> None:
    """Traced parent and child make one trace: the child's ``invoke_agent`` span is a child
    of the parent's ``execute_tool`` span, and its model request is inside it."""
    exporter, settings = exporter_and_settings()
    child = child_of(reply("child answer"), agent_strategy="no-action", instrument=settings)
    result = await parent_of(child, reply("ok"), instrument=settings).run("go")
    spans = exporter.get_finished_spans()
    [tool_span] = [s for s in spans if s.name == "execute_tool helper"]
    runs = {(s.attributes or {})["ponder.run_id"]: s for s in spans if s.name.startswith("invoke")}
    inner = runs[f"{result.run_id}.c1"]
    assert inner.parent is not None and inner.parent.span_id == tool_span.context.span_id
    assert runs[result.run_id].parent is None
    assert {s.context.trace_id for s in spans} == {tool_span.context.trace_id}
    [chat] = [s for s in spans if s.name == "chat child"]
    assert chat.parent is not None and chat.parent.span_id in {
        s.context.span_id for s in spans if s.context.trace_id == inner.context.trace_id
    }


async def test_an_mcp_question_in_a_child_suspends_the_parent_and_its_answer_resumes_both(
    tmp_path: Path,
) -> None:
    """The child's MCP server asks a question: the parent suspends on the call, showing the
    child's question; a wrong answer is refused before anything runs, the right one
    finishes the child's tool and then the parent."""
    store = open_store(tmp_path / "runs.db")
    child = agent_for(calling(("ask_contact", {})))
    async with child:
        parent = parent_of(child, reply("Added."), store=store)
        first = await parent.run("Add a contact.")
        assert first.status == "suspended" and first.suspension is not None
        [call] = first.suspension["payload"]["calls"]
        assert call["id"] == "c1" and call["sub_agent"]["reason"] == "elicitation"
        [question] = call["sub_agent"]["payload"]["elicitations"]
        assert question["message"] == "Who should I add?"
        bad = {"action": "accept", "content": {"name": "Ada", "age": 500}}
        with pytest.raises(UserError, match="does not match its schema: age"):
            await parent.resume(first.run_id, {"c1": bad})
        assert (await store.load(first.run_id)).record.status == "suspended"
        good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
        done = await parent.resume(first.run_id, {"c1": {question["id"]: good}})
    assert (done.status, done.output) == ("completed", "Added.")
    assert helper_results(done) == ["added Ada (36)"]
    assert (await store.load(f"{first.run_id}.c1")).record.status == "completed"
    await store.close()
