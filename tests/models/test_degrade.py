"""Degradations over HTTP: each rude server behaviour, and what ponder sends instead."""

from collections.abc import Iterator
from typing import Any

import pytest

from ponder.exceptions import ModelHTTPError, UserError
from ponder.messages import AssistantMessage, ToolCallPart, ToolMessage, UserMessage
from ponder.models import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    OpenAIModel,
    OutputSchema,
    RetryPolicy,
    ToolCallDelta,
    ToolDefinition,
    parse_structured,
)
from ponder.models.base import ModelSettings
from ponder.models.capabilities import STRING_CAP, forget_learned
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

FAST = RetryPolicy(max_retries=1, backoff_base=0.001, backoff_cap=0.01)
ADD = ToolDefinition(
    name="add",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}},
)
STOP = ToolDefinition(name="agent_stop", parameters={"type": "object", "properties": {}})
ASK = [UserMessage(content="add 1 and 2")]
CALL = FakeToolCall(name="add", arguments={"a": 1})


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def _model(server: FakeOpenAIServer, provider: str = "openai", **kw: Any) -> OpenAIModel:
    return OpenAIModel(
        "m", provider=provider, api_key="k", base_url=server.base_url, retry=FAST, **kw
    )


def _features(response: ModelResponse) -> dict[str, str]:
    return {d.feature: d.source for d in response.degradations}


async def test_required_refused_with_a_bare_500_is_learned_and_sent_as_auto() -> None:
    request = ModelRequest(ASK, [ADD, STOP], "required")
    async with FakeOpenAIServer(
        [FakeReply(tool_calls=[CALL])] * 2, quirks=["error_on_required"]
    ) as server:
        first = await _model(server).request(request)
        again = await _model(server).request(request)  # a new instance: learned per process
    assert [c.name for c in first.tool_calls] == ["add"]
    assert _features(first) == {"required_tool_choice": "detected"}
    sent = [r.get("tool_choice") for r in server.requests]
    assert sent == ["required", "auto", "auto"]  # the call's 2 attempts: 1 kept for the re-send
    instruction = server.requests[2]["messages"][-1]
    assert instruction["role"] == "user" and "agent_stop" in instruction["content"]
    assert [c.name for c in again.tool_calls] == ["add"]


async def test_the_llamacpp_profile_knows_required_is_unsupported() -> None:
    async with FakeOpenAIServer(
        [FakeReply(tool_calls=[CALL])], quirks=["error_on_required"]
    ) as server:
        response = await _model(server, "llamacpp").request(ModelRequest(ASK, [ADD], "required"))
    assert len(server.requests) == 1 and server.requests[0]["tool_choice"] == "auto"
    # the stock server's grammar keeps an `auto` reply to a call or a message: no instruction
    assert server.requests[0]["messages"] == [{"role": "user", "content": ASK[0].content}]
    assert _features(response) == {"required_tool_choice": "profile"}
    assert response.degradations[0].action == 'tool_choice "auto"'


async def test_the_ollama_profile_asks_for_the_call_in_words() -> None:
    async with FakeOpenAIServer([FakeReply(tool_calls=[CALL])]) as server:
        response = await _model(server, "ollama").request(ModelRequest(ASK, [ADD], "required"))
    assert server.requests[0]["tool_choice"] == "auto"
    assert "call one of add" in server.requests[0]["messages"][-1]["content"]
    assert "agent_stop" not in server.requests[0]["messages"][-1]["content"]
    assert _features(response) == {"required_tool_choice": "profile"}


async def test_forced_tool_unsupported_is_asked_for_in_words() -> None:
    async with FakeOpenAIServer([FakeReply(tool_calls=[CALL])]) as server:
        model = _model(server, capabilities={"forced_tool_choice": False})
        await model.request(ModelRequest(ASK, [ADD], ForceTool("add")))
    assert server.requests[0]["tool_choice"] == "auto"
    assert "call of the tool add" in server.requests[0]["messages"][-1]["content"]


SCHEMA = OutputSchema(
    name="plan",
    json_schema={
        "type": "object",
        "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["steps"],
        "additionalProperties": False,
    },
)


async def test_refused_response_format_falls_back_to_json_in_text() -> None:
    script = ['Sure! {"steps": ["look", "answer"]} Hope that helps.']
    async with FakeOpenAIServer(script, quirks=["refuse_response_format"]) as server:
        model = _model(server, capabilities={"forced_tool_choice": False})
        response = await model.request(ModelRequest(ASK, output=SCHEMA))
    assert parse_structured(response) == {"steps": ["look", "answer"]}
    assert len(server.requests) == 2  # a refusal that names the feature is not retried
    assert server.requests[0]["response_format"]["type"] == "json_schema"
    assert server.requests[1]["response_format"] == {"type": "json_object"}
    assert '"steps"' in server.requests[1]["messages"][-1]["content"]
    assert _features(response) == {"json_schema_output": "detected"}


async def test_refused_response_format_uses_a_forced_output_tool_where_forcing_works() -> None:
    plan = FakeToolCall(name="plan", arguments={"steps": ["a"]})
    async with FakeOpenAIServer(
        [FakeReply(tool_calls=[plan])], quirks=["refuse_response_format"]
    ) as server:
        response = await _model(server).request(ModelRequest(ASK, output=SCHEMA))
    assert parse_structured(response) == {"steps": ["a"]}
    assert server.requests[1]["tool_choice"] == {"type": "function", "function": {"name": "plan"}}


def _history() -> list[Any]:
    call = ToolCallPart(id="call_0", name="add", arguments='{"a": 1}')
    return [
        *ASK,
        AssistantMessage(parts=(call,)),
        ToolMessage(call_id="call_0", name="add", content="3"),
    ]


async def test_refused_null_content_is_sent_as_an_empty_string() -> None:
    async with FakeOpenAIServer(["3"], quirks=["error_on_null_content"]) as server:
        response = await _model(server).request(ModelRequest(_history(), [ADD]))
    assert response.text == "3"
    assert [r["messages"][1]["content"] for r in server.requests] == [None, ""]
    assert _features(response) == {"null_content": "detected"}


async def test_dropped_tool_messages_are_sent_as_user_messages() -> None:
    def script(body: dict[str, Any]) -> str:
        return " | ".join(str(m.get("content")) for m in body["messages"])

    async with FakeOpenAIServer(script, quirks=["drop_tool_messages"]) as server:
        dropped = await _model(server).request(ModelRequest(_history(), [ADD]))
        kept = await _model(server, "llamacpp").request(ModelRequest(_history(), [ADD]))
    assert "3" not in dropped.text  # the model never saw the result
    assert "Result of the tool call add:\n3" in kept.text
    assert "call_0" not in kept.text  # the server's template shows the model no call ids
    assert _features(kept) == {"null_content": "profile", "tool_role": "profile"}


async def test_a_name_repeated_in_every_streamed_chunk_is_one_name() -> None:
    call = FakeToolCall(name="add", arguments={"a": 12345, "b": 678})
    async with FakeOpenAIServer(
        [FakeReply(tool_calls=[call])], quirks=["repeat_function_name"]
    ) as server:
        events = [
            e async for e in _model(server).stream(ModelRequest(ASK, [ADD], ForceTool("add")))
        ]
    response = events[-1]
    assert isinstance(response, ModelResponse)
    assert [(c.name, c.args) for c in response.tool_calls] == [("add", {"a": 12345, "b": 678})]
    names = [e.name for e in events if isinstance(e, ToolCallDelta) and e.name]
    assert names == ["add"]


async def test_reused_call_ids_are_replaced() -> None:
    async with FakeOpenAIServer(
        [FakeReply(tool_calls=[CALL, CALL])], quirks=["reuse_call_ids"]
    ) as server:
        response = await _model(server).request(ModelRequest(_history(), [ADD]))
    ids = [c.id for c in response.tool_calls]
    assert "call_0" not in ids and len(set(ids)) == 2
    assert server.requests[0]["messages"][1]["tool_calls"][0]["id"] == "call_0"


async def test_streaming_refused_with_tools_is_sent_whole() -> None:
    async with FakeOpenAIServer(
        [FakeReply(content="thinking", tool_calls=[CALL])], quirks=["refuse_streamed_tools"]
    ) as server:
        events = [e async for e in _model(server).stream(ModelRequest(ASK, [ADD]))]
    response = events[-1]
    assert isinstance(response, ModelResponse) and response.tool_calls[0].name == "add"
    assert any(isinstance(e, ToolCallDelta) for e in events[:-1])
    assert [bool(r.get("stream")) for r in server.requests] == [True, False]
    assert _features(response) == {"stream_tool_calls": "detected"}


async def test_an_unrelated_client_error_is_not_a_degradation() -> None:
    async with FakeOpenAIServer([FakeReply(status=400, error_message="bad key")]) as server:
        with pytest.raises(ModelHTTPError, match="bad key"):
            await _model(server).request(ModelRequest(ASK, [ADD], "required"))
    assert len(server.requests) == 1


def test_unknown_capabilities_and_quirks_are_refused() -> None:
    with pytest.raises(UserError, match="unknown model capability 'tool_choise'"):
        OpenAIModel("m", api_key="k", capabilities={"tool_choise": False})
    with pytest.raises(ValueError, match="unknown quirk 'polite'"):
        FakeOpenAIServer([], quirks=["polite"])


async def test_a_stream_opened_and_left_empty_turns_the_riskiest_feature_off() -> None:
    # The stock llama.cpp server answers a streamed "required" with 200, then breaks off.
    def script(body: dict[str, Any]) -> FakeReply:
        if body.get("tool_choice") == "required":
            return FakeReply(empty_choices=True)
        return FakeReply(tool_calls=[CALL])

    async with FakeOpenAIServer(script) as server:
        events = [e async for e in _model(server).stream(ModelRequest(ASK, [ADD], "required"))]
    response = events[-1]
    assert isinstance(response, ModelResponse) and response.tool_calls[0].name == "add"
    assert [r["tool_choice"] for r in server.requests] == ["required", "auto"]  # 2 attempts
    assert _features(response) == {"required_tool_choice": "detected"}


async def test_llamacpp_tool_schemas_cap_every_string() -> None:
    """The stock server writes auto-chosen arguments without max_tokens: a cap ends them."""
    texts = {
        "long": {"type": "string", "minLength": 1, "maxLength": 2000},
        "free": {"type": "string"},
        "short": {"type": "string", "maxLength": 20},
        "either": {"type": ["string", "null"]},
        "pick": {"type": "string", "enum": ["a", "b"]},
        "count": {"type": "integer"},
        "maxLength": {"type": "integer", "default": 5},  # a parameter may have that name
    }
    note = ToolDefinition(name="note", parameters={"type": "object", "properties": texts})
    async with FakeOpenAIServer(["ok", "ok"]) as server:
        capped = await _model(server, "llamacpp").request(ModelRequest(ASK, [note]))
        await _model(server).request(ModelRequest(ASK, [note]))
    sent = [r["tools"][0]["function"]["parameters"]["properties"] for r in server.requests]
    assert sent[0] == {
        "long": {"type": "string", "maxLength": STRING_CAP},
        "free": {"type": "string", "maxLength": STRING_CAP},
        "short": {"type": "string", "maxLength": 20},
        "either": {"type": ["string", "null"], "maxLength": STRING_CAP},
        "pick": {"type": "string", "enum": ["a", "b"]},
        "count": {"type": "integer"},
        "maxLength": {"type": "integer", "default": 5},
    }
    assert sent[1] == texts  # a server with length_limits gets the schema as it is
    assert "length_limits" in _features(capped)


async def test_a_max_tokens_request_caps_strings_at_four_characters_a_token() -> None:
    """What a server honouring max_tokens would let the model write in one string."""
    note = ToolDefinition(
        name="note",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    sent = []
    async with FakeOpenAIServer(["ok", "ok"]) as server:
        for limit in (96, 4000):
            settings = ModelSettings(max_tokens=limit)
            await _model(server, "llamacpp").request(ModelRequest(ASK, [note], settings=settings))
        sent = [
            r["tools"][0]["function"]["parameters"]["properties"]["text"] for r in server.requests
        ]
    assert [s["maxLength"] for s in sent] == [384, STRING_CAP]
    assert [r["max_tokens"] for r in server.requests] == [96, 4000]


def test_capability_overrides_from_toml_reach_the_model(tmp_path: Any) -> None:
    from ponder import Agent
    from ponder.config import load_config

    path = tmp_path / "ponder.toml"
    path.write_text("[llm]\nmodel_capabilities = { required_tool_choice = false }\n")
    config = load_config(path, environ={})
    assert config.model_capabilities == {"required_tool_choice": False}
    model = Agent("openai:m", api_key="k", config=config).model
    assert isinstance(model, OpenAIModel)
    assert model.effective_capabilities.required_tool_choice is False
    bad = Agent("openai:m", api_key="k", model_capabilities={"required": False})
    with pytest.raises(UserError, match="unknown model capability 'required'"):
        _ = bad.model
