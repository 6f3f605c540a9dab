"""Providers that reuse tool-call ids, across rounds and within one response."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import Store
from ponder.tools import tool

from .test_crash_resume import store_url, worker
from .worker import reused_script

REUSED = {"REUSED_IDS": "1"}


def reused_agent(store: Store, log: list[str], model: ScriptedModel | None = None) -> Agent:
    @tool(idempotent=True)
    async def measure(item: str) -> str:
        """Measure an item.

        Args:
            item: What to measure.
        """
        log.append(item)
        return f"{item}: {len(item)}"

    @tool(requires_approval=True)
    async def publish(text: str) -> str:
        """Publish a text.

        Args:
            text: The text.
        """
        log.append(text)
        return f"published {text!r}"

    return Agent(
        model or ScriptedModel(reused_script),
        tools=[measure, publish],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )


def results(messages: Any) -> list[str]:
    return [m.content for m in messages if isinstance(m, ToolMessage)]


EXPECTED = ["a0: 2", "published 'report'", "a2: 2", "bb2: 3"]


async def test_an_approved_call_under_a_reused_id_runs_and_gets_its_own_result(
    store: Store,
) -> None:
    log: list[str] = []
    agent = reused_agent(store, log)
    suspended = await agent.run("measure things")
    assert suspended.status == "suspended" and suspended.suspension is not None
    assert [c["name"] for c in suspended.suspension["payload"]["calls"]] == ["publish"]
    done = await agent.resume(suspended.run_id, "approve")
    assert done.status == "completed" and done.output == "measured everything"
    assert results(done.messages)[:4] == EXPECTED
    assert log == ["a0", "report", "a2", "bb2"]


async def test_duplicate_ids_in_one_response_are_renumbered(
    store: Store,
) -> None:
    log: list[str] = []
    model = ScriptedModel(
        [
            call_tools(("measure", {"item": "a"}, "c"), ("measure", {"item": "bb"}, "c")),
            call_tools(("agent_stop", {"result": "measured"}, "c")),
            reply("measured both"),
        ]
    )
    done = await reused_agent(store, log, model).run("measure things")
    assert done.status == "completed" and done.output == "measured both"
    calls = next(m for m in done.messages if m.kind == "assistant").tool_calls
    assert [c.id for c in calls] == ["c", "c_2"]
    assert [c.provider_id for c in calls] == [None, "c"]
    answers = [m for m in done.messages if isinstance(m, ToolMessage)][:2]
    assert [(m.call_id, m.content) for m in answers] == [("c", "a: 1"), ("c_2", "bb: 2")]
    assert log == ["a", "bb"]


def finish(url: str, run_id: str, log: Path) -> dict[str, Any]:
    """Resume (approving) until the run completes; the user's decision stands."""
    for _ in range(4):
        code, result = worker(url, run_id, log, "resume", value="approve", env=REUSED)
        assert code == 0
        if result["status"] == "completed":
            return result
    raise AssertionError(f"run {run_id} did not complete")


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_reused_ids_survive_a_kill_at_every_durable_boundary(backend: str, tmp_path: Path) -> None:
    url = store_url(backend, tmp_path)
    prefix = f"reuse-{backend}-{uuid.uuid4().hex[:12]}"
    code, first = worker(url, f"{prefix}-ref", tmp_path / "ref.log", "start", env=REUSED)
    assert code == 0 and first["status"] == "suspended"
    reference = finish(url, f"{prefix}-ref", tmp_path / "ref.log")
    assert [m["content"] for m in reference["messages"] if m["kind"] == "tool"][:4] == EXPECTED
    phases = [("start", n) for n in range(1, first["writes"] + 1)]
    phases += [("resume", n) for n in range(1, reference["writes"] + 1)]
    assert len(phases) >= 12
    for index, (phase, crash) in enumerate(phases):
        run, log = f"{prefix}-{index}", tmp_path / f"{index}.log"
        if phase == "resume":
            assert worker(url, run, log, "start", env=REUSED)[0] == 0
        value = "approve" if phase == "resume" else None
        code, _ = worker(url, run, log, phase, crash, value=value, env=REUSED)
        assert code == -9, f"{phase} should have been killed at write {crash}"
        result = finish(url, run, log)
        assert result["messages"] == reference["messages"], f"{phase}, killed at write {crash}"
        counts = Counter(log.read_text().split())
        assert counts == Counter(["a0", "report", "a2", "bb2"]), f"{phase} {crash}: {counts}"
