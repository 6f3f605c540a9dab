"""The command line where a mode flag meets a config's workflow."""

from __future__ import annotations

import json
from pathlib import Path

from ponder.testing import FakeOpenAIServer, FakeReply
from tests.cli.test_commands import ponder


def docs_and_config(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text("The harbour tide peaks at 14:20 on Tuesdays.\n")
    config = tmp_path / "agent.toml"
    config.write_text('agent_workflow = "step-react"\n')
    return docs, config


def test_rag_over_a_step_react_config_runs_rag(tmp_path: Path) -> None:
    docs, config = docs_and_config(tmp_path)
    assert ponder("index", str(docs)).returncode == 0
    with FakeOpenAIServer([FakeReply(content="At 14:20.")]) as server:
        answered = ponder(
            "run",
            "When does the tide peak?",
            "-m",
            "openai:m",
            "--config",
            str(config),
            "--rag",
            str(docs),
            "--json",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
        )
    assert answered.returncode == 0, answered.stderr
    events = [json.loads(line) for line in answered.stdout.splitlines()]
    assert events[-1]["output"] == "At 14:20."
    assert any(e["kind"] == "retrieval" for e in events)


def test_rag_with_an_explicit_step_react_workflow_is_refused(tmp_path: Path) -> None:
    docs, _ = docs_and_config(tmp_path)
    refused = ponder(
        "run",
        "q",
        "-m",
        "openai:m",
        "--workflow",
        "step-react",
        "--rag",
        str(docs),
        OPENAI_API_KEY="k",
    )
    assert refused.returncode != 0
    assert "step-react" in refused.stderr and "rag" in refused.stderr
    assert "Traceback" not in refused.stderr
