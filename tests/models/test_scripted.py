import pytest
from pydantic import BaseModel

from ponder.exceptions import ModelResponseError, StructuredOutputError, UserError
from ponder.messages import Ledger, ToolMessage, UserMessage
from ponder.models import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
    Usage,
    call_tools,
    output_schema,
    parse_structured,
    reply,
)


def _request(text: str = "hi", **kwargs: object) -> ModelRequest:
    return ModelRequest(messages=[UserMessage(content=text)], **kwargs)  # type: ignore[arg-type]


async def test_script_is_served_in_order_with_deterministic_ids() -> None:
    model = ScriptedModel(
        [
            call_tools(("think_and_reason", {"last_step": "", "summary": "plan"})),
            call_tools(
                ("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), text="", reasoning=None
            ),
            call_tools(("add", {"a": 0}, "mine")),
            reply("The answer is 3.", reasoning="optional provider reasoning"),
        ]
    )
    tool = ToolDefinition(name="add")
    first = await model.request(_request(tools=[tool], tool_choice=ForceTool("add")))
    second = await model.request(_request())
    third = await model.request(_request())
    last = await model.request(_request())
    assert [c.id for c in first.tool_calls] == ["call_1"]
    assert [c.id for c in second.tool_calls] == ["call_2", "call_3"]
    assert second.tool_calls[1].args == {"a": 3, "b": 4}
    assert [c.id for c in third.tool_calls] == ["mine"]
    assert last.text == "The answer is 3." and last.reasoning == "optional provider reasoning"
    assert model.name == "scripted" and last.model_name == "scripted"
    assert len(model.requests) == 4
    assert model.requests[0].tools == [tool] and model.requests[0].tool_choice == ForceTool("add")
    assert last.usage.requests == 1 and last.usage.input_tokens > 0
    assert last.usage.output_tokens > 0


async def test_raw_string_args_keep_the_parse_error() -> None:
    model = ScriptedModel([call_tools(("bad", '{"a": 1,'))])
    response = await model.request(_request())
    call = response.tool_calls[0]
    assert call.args is None and call.arguments == '{"a": 1,'
    assert call.args_error is not None and "not valid JSON" in call.args_error
    ledger = Ledger([UserMessage(content="go"), response.to_message()])
    ledger.append(ToolMessage(call_id=call.id, name="bad", content=call.args_error, is_error=True))
    ledger.ensure_sendable()


async def test_out_of_script_says_how_many_were_used() -> None:
    model = ScriptedModel(["one", "two"])
    assert (await model.request(_request())).text == "one"
    assert (await model.request(_request())).text == "two"
    with pytest.raises(ModelResponseError, match="all 2 responses were used"):
        await model.request(_request())


async def test_callable_entries_and_history_driven_handler() -> None:
    model = ScriptedModel([lambda req: f"echo {req.messages[-1].content}"])  # type: ignore[union-attr]
    assert (await model.request(_request("x"))).text == "echo x"

    def handler(request: ModelRequest) -> ModelResponse | str:
        if len(request.messages) == 1:
            return call_tools(("add", {"a": 1}))
        return "done"

    looping = ScriptedModel(handler)
    assert (await looping.request(_request())).tool_calls[0].id == "call_1"
    assert (await looping.request(_request())).tool_calls[0].id == "call_2"
    two = ModelRequest(messages=[UserMessage(content="a"), UserMessage(content="b")])
    assert (await looping.request(two)).text == "done"


async def test_stream_yields_deltas_then_the_same_response() -> None:
    script = [
        reply("Hello there, world", reasoning="thinking hard"),
        call_tools(("add", {"a": 1, "b": 2}), ("mul", {"x": 3})),
    ]
    streamed = ScriptedModel(script)
    direct = ScriptedModel(script)
    for _ in script:
        events = [e async for e in streamed.stream(_request())]
        final = events[-1]
        assert isinstance(final, ModelResponse)
        assert final == await direct.request(_request())
        deltas = events[:-1]
        text = "".join(e.text for e in deltas if isinstance(e, TextDelta))
        reasoning = "".join(e.text for e in deltas if isinstance(e, ReasoningDelta))
        assert text == final.text and reasoning == final.reasoning
        calls = [e for e in deltas if isinstance(e, ToolCallDelta)]
        for index, call in enumerate(final.tool_calls):
            mine = [d for d in calls if d.index == index]
            assert mine[0].id == call.id and mine[0].name == call.name
            assert "".join(d.arguments for d in mine) == call.arguments
    assert len([e for e in events if isinstance(e, TextDelta)]) == 0


async def test_given_usage_is_kept() -> None:
    model = ScriptedModel([reply("x", usage=Usage(input_tokens=7, output_tokens=2))])
    usage = (await model.request(_request())).usage
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (1, 7, 2)


class Answer(BaseModel):
    value: int
    unit: str


async def test_structured_output_round_trip_and_typed_errors() -> None:
    schema = output_schema(Answer)
    model = ScriptedModel(['{"value": 3, "unit": "m"}', '{"value": 3,', '{"value": "x"}'])
    good = await model.request(_request(output=schema))
    assert model.requests[0].output == schema
    assert parse_structured(good, Answer) == Answer(value=3, unit="m")
    with pytest.raises(StructuredOutputError, match="not valid JSON") as bad_json:
        parse_structured(await model.request(_request(output=schema)), Answer)
    assert bad_json.value.raw == '{"value": 3,'
    with pytest.raises(StructuredOutputError, match="does not match Answer"):
        parse_structured(await model.request(_request(output=schema)), Answer)


def test_malformed_script_input_is_a_user_error() -> None:
    with pytest.raises(UserError):
        ScriptedModel("just a string")
    with pytest.raises(UserError):
        call_tools()
    with pytest.raises(UserError):
        call_tools(("add",))  # type: ignore[arg-type]
    with pytest.raises(UserError):
        call_tools(("add", 5))  # type: ignore[arg-type]
    with pytest.raises(UserError):
        output_schema(42)  # type: ignore[arg-type]
