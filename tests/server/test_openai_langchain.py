"""LangChain's ``ChatOpenAI`` drives the endpoint: ``bind_tools`` loops, structured output."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from ponder.server.app import create_app

from .live import LiveServer, live_server
from .openai_agents import report_agent

langchain_openai = pytest.importorskip("langchain_openai")
messages = pytest.importorskip("langchain_core.messages")


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    raise AssertionError("runs on the client side of the test")


@pytest.fixture
def server() -> Iterator[LiveServer]:
    with live_server(create_app(report_agent())) as running:
        yield running


def chat(server: LiveServer) -> object:
    return langchain_openai.ChatOpenAI(
        model="ponder", base_url=f"{server.url}/v1", api_key="unused", max_retries=0
    )


def test_bind_tools_runs_a_client_side_tool_loop(server: LiveServer) -> None:
    model = chat(server).bind_tools([get_weather])  # type: ignore[attr-defined]
    question = messages.HumanMessage("What is the weather in Paris?")
    asked = model.invoke([question])
    assert [(c["name"], c["args"]) for c in asked.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    result = messages.ToolMessage("hail", tool_call_id=asked.tool_calls[0]["id"])
    answer = model.invoke([question, asked, result])
    assert answer.content == "In Paris: hail."
    assert answer.response_metadata["finish_reason"] == "stop"
    streamed = "".join(str(c.content) for c in model.stream([question, asked, result]))
    assert streamed == "In Paris: hail."  # the same results again: the same answer


class Report(BaseModel):
    """A weather report."""

    city: str
    sky: str


@pytest.mark.parametrize("method", [None, "json_schema", "json_mode"])
def test_with_structured_output_gets_the_typed_answer(
    server: LiveServer, method: str | None
) -> None:
    options = {} if method is None else {"method": method}
    structured = chat(server).with_structured_output(Report, **options)  # type: ignore[attr-defined]
    assert structured.invoke("What is the weather in Paris?") == Report(city="Paris", sky="unknown")


def test_function_calling_structured_output_is_refused_naming_the_way_that_works(
    server: LiveServer,
) -> None:
    import openai

    structured = chat(server).with_structured_output(Report, method="function_calling")  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError) as refused:
        structured.invoke("What is the weather in Paris?")
    assert refused.value.param == "tool_choice"
    assert "response_format" in refused.value.message
