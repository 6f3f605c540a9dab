"""A normal stop of ``ponder serve --store`` loses nothing; a restart picks the runs back up.

Everything runs for real: the server is a subprocess stopped by real signals, on a real
SQLite file and a real PostgreSQL database, against the fake OpenAI provider.
"""

from __future__ import annotations

import signal
from collections import Counter

import httpx
import pytest

from ponder.testing import FakeOpenAIServer

from .serve_process import AUTH, STEPS, Serve

RUNS = 6


def _labels(serve: Serve, tag: str) -> list[str]:
    return [f"{tag}-{serve.port}-{i}" for i in range(RUNS)]


def _assert_each_step_ran_once(serve: Serve, labels: list[str]) -> None:
    # a shared PostgreSQL database may hold runs a server accepted before: the starting
    # server rightly finishes them too, so only this test's tasks are counted
    ours = [line for line in serve.steps() if line.rsplit(" ", 1)[0] in labels]
    counts = Counter(ours)
    assert [line for line, seen in counts.items() if seen > 1] == []  # no duplicated effect
    ran = Counter(line.rsplit(" ", 1)[0] for line in counts)
    assert set(ran) == set(labels) and max(ran.values()) <= STEPS


def _interrupted_calls(provider: FakeOpenAIServer) -> set[tuple[str, str]]:
    """(task, call id) of each call the model was told a stop interrupted."""
    found = set()
    for body in provider.requests:
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        for message in body["messages"]:
            if message["role"] == "tool" and "interrupted" in str(message["content"]):
                found.add((task, message["tool_call_id"]))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stop_interrupts_runs_resumably_and_a_restart_finishes_them(
    serve: Serve, sig: signal.Signals
) -> None:
    serve.start("--drain-timeout", "0")
    labels = _labels(serve, sig.name)
    run_ids = []
    for label in labels:
        accepted = serve.post(label)
        assert accepted.status_code == 201, accepted.text
        run_ids.append(accepted.json()["id"])
    serve.wait_steps(RUNS)  # every run is in flight
    assert serve.stop(sig) == 0, serve.output()
    stored = serve.stored_statuses(run_ids)
    assert set(stored.values()) <= {"interrupted", "completed"}, stored
    assert "interrupted" in stored.values()

    serve.start()
    runs = serve.wait_done(run_ids)
    assert {r["status"] for r in runs.values()} == {"completed"}, runs
    assert {r["output"] for r in runs.values()} == {f"finished {label}" for label in labels}
    assert serve.stop() == 0, serve.output()
    assert set(serve.stored_statuses(run_ids).values()) == {"completed"}
    _assert_each_step_ran_once(serve, labels)


def test_without_resume_runs_the_interrupted_runs_wait_for_a_resume(serve: Serve) -> None:
    serve.start("--drain-timeout", "0")
    label = _labels(serve, "manual")[0]
    run_id = serve.post(label).json()["id"]
    serve.wait_steps(1)
    assert serve.stop() == 0, serve.output()
    assert serve.stored_statuses([run_id]) == {run_id: "interrupted"}

    serve.start("--no-resume-runs")
    assert serve.run(run_id)["status"] == "interrupted"
    resumed = httpx.post(
        f"{serve.url}/v1/runs/{run_id}/resume", json={"decision": None}, headers=AUTH
    )
    assert resumed.status_code == 200, resumed.text
    assert serve.wait_done([run_id])[run_id]["status"] == "completed"
    assert serve.stop() == 0
    _assert_each_step_ran_once(serve, [label])


def test_a_stop_lets_running_steps_finish_within_the_drain_time(
    serve: Serve, provider: FakeOpenAIServer
) -> None:
    serve.start("--drain-timeout", "60")
    labels = _labels(serve, "drain")
    run_ids = [serve.post(label).json()["id"] for label in labels]
    serve.wait_steps(RUNS)
    assert serve.stop() == 0, serve.output()
    assert set(serve.stored_statuses(run_ids).values()) <= {"interrupted", "completed"}
    serve.start()
    runs = serve.wait_done(run_ids)
    assert {r["status"] for r in runs.values()} == {"completed"}, runs
    assert serve.stop() == 0
    _assert_each_step_ran_once(serve, labels)
    # a step the stop cut short is never run again; the model is told so instead
    assert len(serve.steps()) + len(_interrupted_calls(provider)) == RUNS * STEPS


def test_every_accepted_run_survives_a_kill_and_completes_after_a_restart(serve: Serve) -> None:
    """Accepted means stored: a SIGKILL right after the answers loses no run."""
    serve.start()
    labels = _labels(serve, "killed")
    run_ids = []
    for label in labels:
        accepted = serve.post(label)
        assert accepted.status_code == 201, accepted.text
        run_ids.append(accepted.json()["id"])
    assert serve.stop(signal.SIGKILL) == -signal.SIGKILL
    assert set(serve.stored_statuses(run_ids)) == set(run_ids)  # every row is there

    serve.start()
    runs = serve.wait_done(run_ids)
    assert {r["status"] for r in runs.values()} == {"completed"}, runs
    assert {r["output"] for r in runs.values()} == {f"finished {label}" for label in labels}
    assert serve.stop() == 0, serve.output()
    _assert_each_step_ran_once(serve, labels)
