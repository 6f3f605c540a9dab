"""The crossings of features with a run resumed (or a session continued) in another
process that the matrix had open: each phase is a real subprocess on a shared store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

ROOT = Path(__file__).resolve().parents[2]


def worker(scenario: str, url: str, run_id: str, base_url: str = "") -> dict[str, Any]:
    """Run one phase of ``scenario`` in a fresh Python process; its result as JSON."""
    command = [sys.executable, "-m", "tests.composition.cell_worker", scenario, url, run_id]
    done = subprocess.run(
        [*command, base_url], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def of_kind(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in result["events"] if e["kind"] == kind]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite3'}"


def test_a_sessions_thinking_and_plan_continue_in_another_process(url: str) -> None:
    """The second turn of a session, in a new process, reads the first turn's thinking
    and plan from the store: its thought is the second of the history, and the plan item
    it completes is the one the first turn wrote."""
    first = worker("thinking-1", url, "s1")
    assert first["output"] == "one"
    second = worker("thinking-2", url, "s1")
    assert second["output"] == "two"
    assert of_kind(second, "thinking")[-1]["data"]["thought_history_length"] == 2
    assert of_kind(second, "todo")[-1]["data"]["changed"] == ["1"]


def test_usage_limits_hold_in_the_process_that_resumes(url: str) -> None:
    """A run started with ``UsageLimits(requests=3)`` and suspended for approval keeps its
    limits when another process resumes it: the resumed loop ends at the third request,
    with the answer and the stop reason of the limit."""
    first = worker("limits-start", url, "r1")
    assert first["status"] == "suspended" and first["requests"] == 1
    done = worker("limits-resume", url, "r1")
    assert (done["status"], done["output"]) == ("completed", "Stopped at the limit.")
    assert done["stop_reason"] == "requests_limit" and done["requests"] == 3
    assert [(e["limit"], e["value"]) for e in of_kind(done, "limit_reached")] == [("requests", 3)]


def test_a_fallback_model_answers_in_the_process_that_resumes(url: str) -> None:
    """A run on ``[primary, backup]`` suspended in one process is resumed in another: the
    primary is still down, so the backup answers there too, and an event says so."""
    first = worker("fallback-start", url, "r1")
    assert first["status"] == "suspended"
    assert [e["answered_by"] for e in of_kind(first, "model_fallback")] == ["backup"]
    done = worker("fallback-resume", url, "r1")
    assert (done["status"], done["output"]) == ("completed", "Deployed by the backup.")
    fell = of_kind(done, "model_fallback")
    assert [(e["failed"], e["answered_by"]) for e in fell] == [("primary", "backup")] * 2


def _price(input_tokens: int, output_tokens: int) -> float:
    usage = PriceUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return float(calc_price(usage, model_ref="gpt-4o-mini", provider_id="openai").total_price)


def test_the_price_of_a_resumed_run_covers_both_processes(url: str) -> None:
    """The price of a run resumed in another process is that of all its requests, those
    made before the suspension included, as its usage is."""
    deploy = FakeReply(tool_calls=[FakeToolCall(name="deploy", arguments={"target": "prod"})])
    stop = FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "ok"})])
    with FakeOpenAIServer([deploy, stop, "Deployed."]) as server:
        first = worker("cost-start", url, "r1", server.base_url)
        done = worker("cost-resume", url, "r1", server.base_url)
    assert first["status"] == "suspended" and first["cost"] > 0
    assert (done["status"], done["output"]) == ("completed", "Deployed.")
    last = of_kind(done, "usage")[-1]  # the run's tokens so far, both processes'
    assert done["requests"] == 3 and len(server.requests) == 3
    assert done["cost"] > first["cost"] and last["cost"] == pytest.approx(done["cost"])
    assert done["cost"] == pytest.approx(_price(last["input_tokens"], last["output_tokens"]))
