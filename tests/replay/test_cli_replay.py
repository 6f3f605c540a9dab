"""``ponder run --record`` against the fake provider, then ``ponder replay`` offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.cli.test_commands import one_line_error, ponder

TOOLS = "tests.replay.tools:TOOLS"


def call(name: str, **arguments: object) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])


SCRIPT = [
    call("think_and_reason", last_step="", summary="Multiply the numbers."),
    call("multiply", a=17, b=23),
    call("think_and_reason", last_step="multiplied", summary="Ready to answer."),
    call("agent_stop", result="391"),
    FakeReply(content="17 × 23 = 391", input_tokens=11, output_tokens=5),
]


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run recorded through the real CLI; the provider is gone before any replay."""
    path = tmp_path_factory.mktemp("cassette") / "run.json"
    with FakeOpenAIServer(SCRIPT) as provider:
        result = ponder(
            "run",
            "What is 17 times 23?",
            "-m",
            "openai:fake-model",
            "--tools",
            TOOLS,
            "--record",
            str(path),
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=provider.base_url,
        )
        assert len(provider.requests) == 5
    assert result.returncode == 0, result.stderr
    assert "live multiply(17, 23)" in result.stderr
    return path


def test_the_cassette_holds_requests_tool_calls_and_the_vm_path(cassette: Path) -> None:
    data = json.loads(cassette.read_text())
    assert data["format"] == "ponder-cassette" and data["version"] == 1
    assert data["prompt"] == "What is 17 times 23?" and data["model"] == "openai:fake-model"
    assert data["status"] == "completed" and data["output"] == "17 × 23 = 391"
    assert [e["purpose"] for e in data["exchanges"]][:2] == ["reasoning", "action"]
    assert data["exchanges"][0]["request"]["tool_choice"] == {"tool": "think_and_reason"}
    # each message is kept once: a request keeps only what it adds to the one before
    assert data["exchanges"][0]["prefix"] == 0 and data["exchanges"][1]["prefix"] >= 2
    assert len(data["exchanges"][1]["request"]["messages"]) <= 3
    assert data["exchanges"][-1]["response"]["usage"]["input_tokens"] == 11
    (record,) = data["tool_calls"]
    assert record["name"] == "multiply" and record["arguments"] == {"a": 17, "b": 23}
    assert record["result"]["output"] == "391" and record["status"] == "ok"
    nodes = [v["node"] for v in data["trace"]]
    assert nodes[:3] == ["STRATEGY_INIT", "AGENT_ENTRY", "SINGLE_STRATEGY_CALL"]
    assert nodes[-1] == "AGENT_POST_PROCESS"
    assert [t["name"] for t in data["tools"]] == ["multiply"]
    assert data["tools_spec"] == TOOLS and "api_key" not in data["config"]


def test_replay_runs_offline_and_finds_no_divergence(cassette: Path) -> None:
    result = ponder("replay", str(cassette))
    assert result.returncode == 0, result.stderr
    assert "no divergence" in result.stdout and "17 × 23 = 391" in result.stdout
    assert "live multiply" not in result.stderr  # the tool's result came from the cassette


def test_replay_json_summary(cassette: Path) -> None:
    result = ponder("replay", str(cassette), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "same" and summary["requests"] == 5
    assert summary["tool_calls"] == 1 and summary["output"] == "17 × 23 = 391"


def test_live_tools_run_the_tools_for_real(cassette: Path) -> None:
    result = ponder("replay", str(cassette), "--live-tools")
    assert result.returncode == 0, result.stderr
    assert "live multiply(17, 23)" in result.stderr and "no divergence" in result.stdout


def test_a_changed_prompt_is_a_divergence_with_a_diff(cassette: Path) -> None:
    result = ponder("replay", str(cassette), "--task", "What is 2 times 3?")
    assert result.returncode == 1
    out = result.stdout
    assert "replay diverged at request 1 (reasoning)" in out
    assert '-  content: "What is 17 times 23?"' in out
    assert '+  content: "What is 2 times 3?"' in out


def test_changed_instructions_are_a_divergence(cassette: Path) -> None:
    result = ponder("replay", str(cassette), "--instructions", "Answer in French.", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["status"] == "diverged" and report["what"] == "request"
    assert report["index"] == 0 and "+    Answer in French." in report["diff"]


def test_a_changed_program_is_a_divergence_in_the_vm_path(cassette: Path) -> None:
    data = json.loads(cassette.read_text())
    data["trace"][2]["node"] = "STEP_EXEC"  # as if another program had been recorded
    other = cassette.with_name("other-program.json")
    other.write_text(json.dumps(data))
    result = ponder("replay", str(other))
    assert result.returncode == 1
    assert "replay diverged at VM step 3" in result.stdout
    assert "-pc   4 STEP_EXEC" in result.stdout and "+pc   4 SINGLE_STRATEGY_CALL" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"format": "other"}', "is not a ponder cassette"),
        ('{"format": "ponder-cassette", "version": 9}', "has version 9"),
        (
            '{"format": "ponder-cassette", "version": 1, "exchanges": [{"request": 3}]}',
            "exchanges.0.request",
        ),
        (
            '{"format": "ponder-cassette", "version": 1, '
            '"exchanges": [{"prefix": 2, "request": {}}]}',
            "prefix 2 is longer than the previous request",
        ),
    ],
)
def test_a_malformed_cassette_is_one_clear_error(
    tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = ponder("replay", str(bad))
    assert result.returncode == 2
    assert message in one_line_error(result)


def test_a_missing_cassette_is_one_clear_error(tmp_path: Path) -> None:
    result = ponder("replay", str(tmp_path / "none.json"))
    assert result.returncode == 2
    assert "cannot read the cassette" in one_line_error(result)
