"""The matrix's rows for images in prompts, OpenTelemetry tracing and an MCP server's
question (elicitation): with a store, resumed in another process, and in a sync script."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ponder.exceptions import UserError
from ponder.media import Image
from ponder.observability.instrumentation import Instrumentation
from ponder.store import Store, open_store
from tests.mcp.test_client_features import agent_for, calling

from .media_worker import ANSWER, PNG, deploy_agent
from .test_sessions import store

__all__ = ["store"]  # the memory, SQLite and PostgreSQL fixture of the session tests

ROOT = Path(__file__).resolve().parents[2]
SEEN = f"images: image/png:{len(base64.b64encode(PNG))}"


def worker(scenario: str, url: str, run_id: str) -> dict[str, Any]:
    """Run one phase of ``scenario`` in a fresh Python process; its result as JSON."""
    command = [sys.executable, "-m", "tests.composition.media_worker", scenario, url, run_id]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite3'}"


def exporter_and_settings() -> tuple[InMemorySpanExporter, Instrumentation]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, Instrumentation(tracer_provider=provider)


def run_spans(exporter: InMemorySpanExporter) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == "invoke_agent ponder"]


async def test_an_image_is_stored_with_the_run_and_reaches_the_model_after_a_resume(
    store: Store,
) -> None:
    """A prompt's image is checkpointed with the run suspended for approval; the agent that
    resumes it sends the model the same image, inline, in the same user message."""
    first = await deploy_agent().run(["Deploy this.", Image(PNG)], store=store)
    assert first.status == "suspended"
    stored = await store.load(first.run_id)
    [user] = [m for m in stored.messages if m["kind"] == "user"]
    assert user["attachments"][0]["media_type"] == "image/png"
    done = await deploy_agent().resume(first.run_id, "approve", store=store)
    assert (done.status, done.output) == ("completed", SEEN)


def test_an_image_reaches_the_model_in_the_process_that_resumes(url: str) -> None:
    """The run suspended in one process is resumed in another, whose model receives the
    prompt's image read back from the store."""
    first = worker("image-start", url, "r1")
    assert first["status"] == "suspended"
    done = worker("image-resume", url, "r1")
    assert (done["status"], done["output"]) == ("completed", SEEN)


def test_an_image_goes_with_the_prompt_under_run_sync_and_resume_sync(tmp_path: Path) -> None:
    """``run_sync`` takes a prompt with an image, and ``resume_sync`` of the suspended run
    sends it to the model again."""
    store = open_store(tmp_path / "runs.db")
    first = deploy_agent().run_sync(["Deploy this.", Image(PNG)], store=store)
    assert first.status == "suspended"
    done = deploy_agent().resume_sync(first.run_id, "approve", store=store)
    assert (done.status, done.output) == ("completed", SEEN)


async def test_a_stored_run_and_its_resume_are_two_traces_of_one_run_id(store: Store) -> None:
    """With a store, the run that suspends and the run that resumes it are each one
    ``invoke_agent`` span carrying the same ``ponder.run_id``; the approved tool's span is
    in the second."""
    exporter, settings = exporter_and_settings()
    first = await deploy_agent(instrument=settings).run("go", store=store)
    assert first.status == "suspended"
    done = await deploy_agent(instrument=settings).resume(first.run_id, "approve", store=store)
    assert done.status == "completed"
    starts = run_spans(exporter)
    assert [(s.attributes or {})["ponder.run_id"] for s in starts] == [first.run_id] * 2
    assert starts[0].context.trace_id != starts[1].context.trace_id
    [tool_span] = [s for s in exporter.get_finished_spans() if s.name == "execute_tool deploy"]
    assert tool_span.context.trace_id == starts[1].context.trace_id


def test_the_process_that_resumes_traces_its_part_of_the_run(url: str) -> None:
    """Each process traces the part of the run it drives, under the same run id: the
    approved tool runs, and is traced, in the process that resumes."""
    first = worker("trace-start", url, "r1")
    assert first["status"] == "suspended"
    assert {"name": "invoke_agent ponder", "run_id": "r1"} in first["spans"]
    done = worker("trace-resume", url, "r1")
    assert done["status"] == "completed"
    names = [s["name"] for s in done["spans"]]
    assert "execute_tool deploy" in names and "execute_tool deploy" not in [
        s["name"] for s in first["spans"]
    ]
    assert {"name": "invoke_agent ponder", "run_id": "r1"} in done["spans"]


def test_an_mcp_question_is_answered_in_the_process_that_resumes(url: str) -> None:
    """An MCP server's question suspends the run in one process; another process starts
    the server again, answers it, and the server's tool finishes with the answer."""
    first = worker("ask-start", url, "r1")
    assert first["status"] == "suspended"
    assert first["suspension"]["reason"] == "elicitation"
    [question] = first["suspension"]["payload"]["elicitations"]
    assert question["message"] == "Who should I add?"
    done = worker("ask-resume", url, "r1")
    assert (done["status"], done["output"]) == ("completed", "added Ada (36)")


def test_an_mcp_question_suspends_run_sync_and_resume_sync_answers_it(tmp_path: Path) -> None:
    """Under ``run_sync`` an MCP server's question suspends the run; ``resume_sync`` with
    the answer finishes it, and a bad answer is refused without touching the run."""
    store = open_store(tmp_path / "runs.db")
    first = agent_for(calling(("ask_contact", {}))).run_sync("add", store=store)
    assert first.status == "suspended" and first.suspension is not None
    assert first.suspension["reason"] == "elicitation"
    bad = {"action": "accept", "content": {"name": "Ada", "age": 500}}
    with pytest.raises(UserError, match="does not match its schema: age"):
        agent_for(calling(("ask_contact", {}))).resume_sync(first.run_id, bad, store=store)
    done = agent_for(calling(("ask_contact", {}))).resume_sync(first.run_id, ANSWER, store=store)
    assert (done.status, done.output) == ("completed", "added Ada (36)")
