"""Typed final answers: ``output_type`` end to end on scripted models and the fake servers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from ponder.agent import Agent
from ponder.exceptions import StructuredOutputError, UserError
from ponder.messages import UserMessage
from ponder.models import ScriptedModel, reply
from ponder.store import open_store
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import PROMPT, make_agent, of_kind, stop, think
from .steps import no_plan, step_agent, summary


class Product(BaseModel):
    """The product of two numbers, and how it was found."""

    value: int
    how: str


@dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def _react_script(*answers: str) -> ScriptedModel:
    return ScriptedModel(
        [
            think("Multiply them with the tool."),
            call_multiply(),
            stop("391"),
            reply("17 times 23 is 391."),
            *answers,
        ]
    )


def call_multiply() -> Any:
    from ponder.models import call_tools

    return call_tools(("multiply", {"a": 17, "b": 23}))


async def test_react_answer_is_validated_into_the_agent_output_type() -> None:
    model = _react_script('{"value": 391, "how": "the multiply tool"}')
    agent = make_agent(model, output_type=Product)
    result = await agent.run(PROMPT)
    assert result.output == Product(value=391, how="the multiply tool")
    assert result.stop_reason == "answered"
    assert json.loads(result.text) == {"value": 391, "how": "the multiply tool"}
    asked = model.requests[-1]
    assert asked.output is not None and asked.output.name == "Product"
    assert asked.output.json_schema["properties"]["value"]["type"] == "integer"
    assert asked.tools == () and asked.tool_choice == "none"
    instruction = asked.messages[-1]
    assert isinstance(instruction, UserMessage) and "JSON" in instruction.content


async def test_invalid_answers_go_back_with_the_errors_then_stop_typed() -> None:
    model = _react_script('{"value": "many", "how": 1}', '{"value": 391}', "not json at all")
    agent = make_agent(model, output_type=Product, structured_output_retries=2)
    stream = agent.stream(PROMPT)
    events = [e async for e in stream]
    result = stream.result
    assert result.status == "completed" and result.stop_reason == "invalid_output"
    assert result.text == "not json at all"
    with pytest.raises(StructuredOutputError, match="not valid JSON"):
        _ = result.output
    rejected = of_kind(events, "output_rejected")
    assert [(e.attempt, e.retrying) for e in rejected] == [(1, True), (2, True), (3, False)]
    assert "value: Input should be a valid integer" in rejected[0].problem
    correction = model.requests[-1].messages[-1]
    assert isinstance(correction, UserMessage) and "how: Field required" in correction.content


async def test_a_json_answer_that_validates_needs_no_extra_request() -> None:
    model = ScriptedModel(
        [think("Multiply."), call_multiply(), stop("391"), reply('{"x": 1, "y": 2}')]
    )
    result = await make_agent(model, output_type=Point).run(PROMPT)
    assert result.output == Point(x=1, y=2)
    assert len(model.requests) == 4


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (int, '{"response": 391}', 391),
        (list[int], '{"response": [17, 23]}', [17, 23]),
        (Movie, '{"title": "Alien", "year": 1979}', {"title": "Alien", "year": 1979}),
        (bool, '```json\n{"response": true}\n```', True),
    ],
)
async def test_scalars_lists_and_typed_dicts(output_type: Any, answer: str, expected: Any) -> None:
    model = ScriptedModel([reply(answer)])
    agent = Agent(model, agent_strategy="no-action")
    result = await agent.run("Answer.", output_type=output_type)
    assert result.output == expected
    asked = model.requests[0].output
    assert asked is not None and asked.json_schema["type"] == "object"
    assert len(model.requests) == 1  # chat asks for the structure in its one request


async def test_the_run_type_overrides_the_agent_type_and_str_is_plain() -> None:
    model = ScriptedModel([reply("plain words"), reply('{"response": 7}')])
    agent = Agent(model, agent_strategy="no-action", output_type=Product)
    plain = await agent.run("Say it.", output_type=str)
    assert plain.output == "plain words" and model.requests[0].output is None
    seven = await agent.run("Count.", output_type=int)
    assert seven.output == 7


async def test_step_react_final_answer_is_typed() -> None:
    model = ScriptedModel(
        [
            no_plan(),
            stop("found"),
            summary("Found it.", "Alien"),
            '{"title": "Alien", "year": 1979}',
        ]
    )
    result = await step_agent(model).run("Which film?", output_type=Movie)
    assert result.output == {"title": "Alien", "year": 1979}
    assert model.requests[-1].output is not None and len(model.requests) == 4


async def test_rag_with_tools_answers_typed() -> None:
    @tool
    def search(query: str) -> str:
        """Search the notes.

        Args:
            query: What to look for.
        """
        return "Alien came out in 1979."

    from ponder.models import call_tools

    model = ScriptedModel(
        [call_tools(("search", {"query": "Alien"})), reply('{"title": "Alien", "year": 1979}')]
    )
    agent = Agent(model, tools=[search], tool_calling_mode="rag", output_type=Movie)
    result = await agent.run("When did Alien come out?")
    assert result.output == {"title": "Alien", "year": 1979}
    assert model.requests[-1].output is not None and model.requests[-1].tools == ()


async def test_a_streamed_typed_answer_arrives_as_partial_objects() -> None:
    answer = json.dumps({"value": 391, "how": "multiplied seventeen by twenty-three"})
    model = _react_script(answer)
    stream = make_agent(model, output_type=Product).stream(PROMPT)
    events = [e async for e in stream]
    partials = [e.output for e in of_kind(events, "output_partial")]
    assert len(partials) >= 2 and partials[-1] == json.loads(answer)
    assert all(isinstance(p, dict) for p in partials)
    assert stream.result.output.value == 391
    finished = of_kind(events, "run_finished")[0]
    assert json.loads(finished.output)["value"] == 391


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed to {target}"


async def test_a_typed_run_is_stored_and_resumed_with_its_type(tmp_path: Any) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    script = [
        call_tools_deploy(),
        stop("deployed"),
        reply("Deployed to prod."),
        reply('{"title": "prod", "year": 2026}'),
    ]
    first = Agent(ScriptedModel(script), tools=[deploy], store=store, agent_thought_mode="chat")
    suspended = await first.run("Deploy to prod.", output_type=Movie)
    assert suspended.status == "suspended"
    later = ScriptedModel(script[1:])
    # another process, an agent without the type: the stored schema still types the answer
    again = Agent(later, tools=[deploy], store=store, agent_thought_mode="chat")
    done = await again.resume(suspended.run_id, "approve")
    assert done.output == {"title": "prod", "year": 2026}
    assert later.requests[-1].output is not None
    typed = await again.resume(suspended.run_id, output_type=Movie)
    assert typed.output == {"title": "prod", "year": 2026}


def call_tools_deploy() -> Any:
    from ponder.models import call_tools

    return call_tools(("deploy", {"target": "prod"}))


async def test_openai_gets_a_json_schema_response_format() -> None:
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})]),
        FakeReply(content="It is 391."),
        FakeReply(content='{"value": 391, "how": "mental arithmetic"}'),
    ]
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:gpt-4o-mini",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            output_type=Product,
        )
        result = await agent.run("17*23?")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output.value == 391
    body = server.requests[-1]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Product"


async def test_anthropic_answers_through_a_forced_output_tool() -> None:
    pytest.importorskip("anthropic")
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})]),
        FakeReply(content="It is 391."),
        FakeReply(
            tool_calls=[
                FakeToolCall(name="Product", id="o1", arguments={"value": 391, "how": "sum"})
            ]
        ),
    ]
    async with FakeAnthropicServer(script) as server:
        agent = Agent(
            "anthropic:claude-3-5-haiku-latest",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            output_type=Product,
        )
        result = await agent.run("17*23?")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == Product(value=391, how="sum")
    body = server.requests[-1]
    assert body["tool_choice"] == {"type": "tool", "name": "Product"}


class _Opaque:
    def __init__(self, handle: object) -> None:
        self.handle = handle


@pytest.mark.parametrize("bad", [_Opaque, object(), 3])
def test_an_output_type_without_a_json_schema_is_a_user_error(bad: Any) -> None:
    with pytest.raises(UserError, match="output_type"):
        Agent(ScriptedModel([]), output_type=bad)


async def test_a_bad_run_output_type_is_refused_before_any_request() -> None:
    model = ScriptedModel([reply("x")])
    run = Agent(model, agent_strategy="no-action").run("x", output_type=_Opaque)
    with pytest.raises(UserError, match="output_type"):  # raised when awaited, as a coroutine's
        await run
    assert model.requests == []
    assert model.requests == []


def test_a_json_schema_spec_follows_refs_within_and_refuses_others() -> None:
    from ponder.agent.output import OutputSpec

    schema = {
        "$defs": {"Sky": {"type": "string"}},
        "type": "object",
        "properties": {"sky": {"$ref": "#/$defs/Sky"}, "n": {"$anchor": "n", "type": "integer"}},
    }
    spec = OutputSpec(json_schema=schema, name="report", strict=False)
    assert spec.read('{"sky": "grey"}').value == {"sky": "grey"}
    assert spec.read('{"sky": 3}').problem == "sky: 3 is not of type 'string'"
    assert spec.schema.name == "report" and spec.schema.strict is False
    for ref in ("#/$defs/Rain", "#/nowhere", "https://example.com/schema.json", "other.json"):
        with pytest.raises(UserError, match="does not point into the schema"):
            OutputSpec(json_schema={"type": "object", "properties": {"a": {"$ref": ref}}})
