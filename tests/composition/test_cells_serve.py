"""The matrix's ``ponder serve`` column: each feature through the runs API of
`create_app`, served by a real uvicorn server, read back from the run's SSE events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ponder.agent import Agent
from ponder.exceptions import ModelHTTPError
from ponder.models import ModelRequest, ScriptedModel, Usage, call_tools, reply
from ponder.observability.instrumentation import Instrumentation
from ponder.replay import ReplayModel, load_cassette
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from tests.agent.steps import lookup, plan, step_agent, summary
from tests.server.live import live_server, run_events

STOP = call_tools(("agent_stop", {"result": "done"}))


def served(agent: Agent, prompt: str = "go", **app: Any) -> tuple[dict[str, Any], list[Any]]:
    """POST one run to a served ``agent``; its summary once done, and its events."""
    with live_server(create_app(agent, **app)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            started = client.post("/v1/runs", json={"prompt": prompt})
            assert started.status_code == 201, started.text
            run_id = started.json()["id"]
            events = run_events(client, run_id)
            return client.get(f"/v1/runs/{run_id}").json(), events


def of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == kind]


def test_a_step_plan_runs_over_http_with_its_step_events() -> None:
    """A served step-react agent runs its plan in dependency order; the SSE stream carries
    each step's start and end, and the run's answer reads the steps' results."""
    model = ScriptedModel(
        [
            plan(("a", "Find x", []), ("b", "Use x", ["a"])),
            call_tools(("lookup", {"key": "x"})),
            call_tools(("agent_stop", {"result": "found x"})),
            summary("Found x.", "value of x"),
            call_tools(("agent_stop", {"result": "used x"})),
            summary("Used x."),
            reply("x is value of x"),
        ]
    )
    done, events = served(step_agent(model), "use x")
    assert [e["step_id"] for e in of_kind(events, "step_started")] == ["a", "b"]
    assert [e["step_id"] for e in of_kind(events, "step_finished")] == ["a", "b"]
    assert (done["status"], done["output"]) == ("completed", "x is value of x")


def _verdict(check: str, result: str = "pass") -> tuple[str, dict[str, Any]]:
    return ("verify_reasoning", {"check_type": check, "result": result, "detail": "ok"})


def test_reflection_sends_the_model_back_over_http() -> None:
    """A served agent with reflection: a failed check sends the model back, the passing
    checks lead to the answer, and every verdict is an SSE event."""
    checks = ("self_check", "contradiction_check", "completeness_check")
    model = ScriptedModel(
        [
            STOP,
            call_tools(_verdict("self_check"), _verdict("contradiction_check", "fail")),
            STOP,
            call_tools(*(_verdict(c) for c in checks)),
            reply("checked answer"),
        ]
    )
    agent = Agent(
        model,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
        reflection_depth=2,
    )
    done, events = served(agent)
    verdicts = [(e["check_type"], e["result"]) for e in of_kind(events, "reflection")]
    assert verdicts[1] == ("contradiction_check", "fail")
    assert verdicts[2:] == [(c, "pass") for c in checks]
    assert done["output"] == "checked answer" and model.remaining == 0


def test_a_sub_agent_runs_over_http_and_its_usage_rolls_up() -> None:
    """A served parent calls a child agent: the child's events arrive nested in the
    parent's stream, its answer is the tool result, its tokens count in the run's usage."""
    used = Usage(requests=1, input_tokens=50, output_tokens=1)
    child = Agent(ScriptedModel([reply("child says 7", usage=used)]), agent_strategy="no-action")
    model = ScriptedModel(
        [call_tools(("helper", {"task": "Count."}, "c1")), STOP, reply("It is 7.")]
    )
    parent = Agent(
        model,
        tools=[child.as_tool("helper", "Counts.")],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    done, events = served(parent, "How many?")
    nested = [e["event"]["kind"] for e in of_kind(events, "sub_agent_event")]
    assert nested[0] == "run_started" and nested[-1] == "run_finished"
    helper = [e["output"] for e in of_kind(events, "tool_call_finished") if e["name"] == "helper"]
    assert helper == ["child says 7"]
    assert done["output"] == "It is 7." and done["usage"]["input_tokens"] >= 50


def _down(request: ModelRequest) -> Any:
    raise ModelHTTPError(503, "overloaded", model_name="primary")


def test_a_fallback_model_answers_over_http_and_an_event_says_so() -> None:
    """A served agent on ``[primary, backup]`` with the primary down: the backup answers
    every request, and each fallback is an SSE event naming both."""
    backup = ScriptedModel([STOP, reply("From the backup.")], name="backup")
    agent = Agent(
        [ScriptedModel(_down, name="primary"), backup],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    done, events = served(agent, "hello")
    fell = [(e["failed"], e["answered_by"]) for e in of_kind(events, "model_fallback")]
    assert fell == [("primary", "backup")] * 2
    assert done["output"] == "From the backup."


def _recording_agent(model: Any, **options: Any) -> Agent:
    return Agent(
        model, tools=[lookup], agent_thought_mode="chat", enable_thinking_tool=False, **options
    )


def test_a_run_recorded_over_http_replays_over_http(tmp_path: Path) -> None:
    """A served agent with ``record=`` writes the cassette of the run it serves; served
    again on a `ReplayModel` of it, the same prompt gets the same answer and tool result."""
    path = tmp_path / "run.json"
    script = [call_tools(("lookup", {"key": "x"})), STOP, reply("x is value of x")]
    first, _ = served(_recording_agent(ScriptedModel(script), record=path), "x?")
    cassette = load_cassette(path)
    assert len(cassette.exchanges) == 3 and len(cassette.tool_calls) == 1
    model = ReplayModel(cassette)
    again, events = served(_recording_agent(model), "x?")
    assert again["output"] == first["output"] == "x is value of x"
    assert model.requests == 3
    looked = [e["output"] for e in of_kind(events, "tool_call_finished") if e["name"] == "lookup"]
    assert looked == ["value of x"]


def test_a_served_run_is_one_trace_with_its_run_id(tmp_path: Path) -> None:
    """A served agent with tracing: the run the API started is one ``invoke_agent`` span
    carrying its run id, its model requests and tool call in the same trace."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    script = [call_tools(("lookup", {"key": "x"})), STOP, reply("x is value of x")]
    agent = _recording_agent(
        ScriptedModel(script), instrument=Instrumentation(tracer_provider=provider)
    )
    done, _ = served(agent, "x?", store=SQLiteStore(tmp_path / "runs.db"))
    spans = exporter.get_finished_spans()
    [run] = [s for s in spans if s.name == "invoke_agent ponder"]
    assert (run.attributes or {})["ponder.run_id"] == done["id"]
    names = [s.name for s in spans if s.context.trace_id == run.context.trace_id]
    assert names.count("chat scripted") == 3 and "execute_tool lookup" in names
