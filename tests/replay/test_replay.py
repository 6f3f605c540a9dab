"""Recording with ``Agent(record=...)`` and replaying with `ReplayModel`, in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from ponder.events import event_to_dict
from ponder.exceptions import ModelError, ReplayDivergence, UserError
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply
from ponder.replay import Cassette, ReplayModel, load_cassette, save_cassette
from ponder.testing import FakeOpenAIServer, FakeReply
from tests.agent.scripts import PROMPT, make_agent, stop, think


def script() -> list[ModelResponse | str]:
    return [
        think("Multiply 17 by 23."),
        call_tools(("multiply", {"a": 17, "b": 23})),
        think("I have the product.", "multiplied"),
        stop("391"),
        reply("17 × 23 = 391"),
    ]


@pytest.fixture
def recorded(tmp_path: Path) -> Cassette:
    path = tmp_path / "run.json"
    result = make_agent(ScriptedModel(script()), record=path).run_sync(PROMPT)
    assert result.output == "17 × 23 = 391"
    return load_cassette(path)


def without_times(events: list) -> list[dict]:
    return [
        {k: v for k, v in event_to_dict(e).items() if k not in ("time", "run_id", "seq")}
        for e in events
    ]


async def test_a_replay_gives_the_recorded_run_again(recorded: Cassette) -> None:
    assert len(recorded.exchanges) == 5 and len(recorded.tool_calls) == 1
    original = make_agent(ScriptedModel(script()))
    first = [e async for e in original.stream(PROMPT)]
    model = ReplayModel(recorded)
    stream = make_agent(model).stream(PROMPT)
    again = [e async for e in stream]
    assert stream.result.output == "17 × 23 = 391" and model.requests == 5
    replayed = [e for e in without_times(again) if e["kind"] not in ("text_delta",)]
    expected = [e for e in without_times(first) if e["kind"] not in ("text_delta",)]
    for event in (*replayed, *expected):
        event.pop("duration", None)
        event.pop("latency", None)  # measured, like the durations
        event.pop("model", None)
    assert replayed == expected


async def test_recording_a_replay_gives_the_same_cassette(
    recorded: Cassette, tmp_path: Path
) -> None:
    path = tmp_path / "again.json"
    await make_agent(ReplayModel(recorded), record=path).run(PROMPT)
    again = load_cassette(path)
    assert again.exchanges == recorded.exchanges
    assert again.tool_calls == recorded.tool_calls and again.trace == recorded.trace


async def test_another_program_diverges_in_the_vm_path(recorded: Cassette) -> None:
    agent = make_agent(ReplayModel(recorded), agent_strategy="no-action")
    with pytest.raises(ReplayDivergence) as caught:
        await agent.run(PROMPT)
    error = caught.value
    assert error.what == "path" and error.index == 2
    assert "STRATEGY_RUN at pc 2" in str(error)
    assert "+pc   2 STRATEGY_RUN" in error.diff


async def test_a_call_the_cassette_lacks_diverges(recorded: Cassette) -> None:
    edited = recorded.model_copy(update={"tool_calls": []})
    with pytest.raises(ReplayDivergence) as caught:
        await make_agent(ReplayModel(edited)).run(PROMPT)
    assert caught.value.what == "tool" and "no such call" in str(caught.value)
    assert "+multiply(" in caught.value.diff


async def test_a_run_that_ends_early_diverges(recorded: Cassette) -> None:
    longer = recorded.model_copy(update={"exchanges": [*recorded.exchanges, recorded.exchanges[0]]})
    with pytest.raises(ReplayDivergence) as caught:
        await make_agent(ReplayModel(longer)).run(PROMPT)
    assert caught.value.what == "end" and "after 5 of the 6" in str(caught.value)


async def test_another_answer_diverges(recorded: Cassette) -> None:
    edited = recorded.model_copy(update={"output": "something else"})
    with pytest.raises(ReplayDivergence) as caught:
        await make_agent(ReplayModel(edited)).run(PROMPT)
    assert caught.value.what == "output"
    assert "-something else" in caught.value.diff and "+17 × 23 = 391" in caught.value.diff


async def test_a_failed_run_is_recorded_and_fails_again(tmp_path: Path) -> None:
    path = tmp_path / "failed.json"
    async with FakeOpenAIServer([FakeReply(status=500, error_message="overloaded")]) as server:
        agent = make_agent(
            "openai:fake-model", base_url=server.base_url, api_key="k", max_retries=0, record=path
        )
        with pytest.raises(ModelError):
            await agent.run(PROMPT)
    cassette = load_cassette(path)
    assert cassette.status == "failed" and cassette.error is not None
    assert cassette.exchanges[0].error is not None and cassette.exchanges[0].response is None
    with pytest.raises(ModelError, match="recorded"):
        await make_agent(ReplayModel(cassette)).run(PROMPT)


def test_a_cassette_round_trips(recorded: Cassette, tmp_path: Path) -> None:
    path = tmp_path / "copy.json"
    save_cassette(recorded, path)
    assert load_cassette(path) == recorded


def test_an_invalid_response_in_a_cassette_is_a_user_error(
    recorded: Cassette, tmp_path: Path
) -> None:
    data = recorded.model_dump(mode="json")
    data["exchanges"][0]["response"]["parts"] = [{"kind": "nonsense"}]
    path = tmp_path / "bad.json"
    path.write_text(__import__("json").dumps(data))
    with pytest.raises(UserError, match=r"exchanges\.0\.response\.parts\.0"):
        ReplayModel(path)


def test_an_unwritable_cassette_is_a_user_error(tmp_path: Path) -> None:
    agent = make_agent(ScriptedModel(script()), record=tmp_path / "missing" / "run.json")
    with pytest.raises(UserError, match="cannot write the cassette"):
        agent.run_sync(PROMPT)
