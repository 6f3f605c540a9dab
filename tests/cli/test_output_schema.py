"""``ponder run --output-schema FILE.json``: the validated JSON answer alone on stdout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .test_commands import ponder

SCHEMA = {
    "title": "city",
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
    "additionalProperties": False,
}


def _run(
    tmp_path: Path, *answers: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    schema = tmp_path / "city.json"
    schema.write_text(json.dumps(SCHEMA))
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "found"})]),
        FakeReply(content="Paris, about two million people."),
        *(FakeReply(content=a) for a in answers),
    ]
    with FakeOpenAIServer(script) as server:
        result = ponder(
            "run",
            "Biggest French city?",
            "-m",
            "openai:fake-model",
            "--output-schema",
            str(schema),
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
            PONDER_AGENT_THOUGHT_MODE="chat",
            PONDER_ENABLE_THINKING_TOOL="false",
        )
        return result, server.requests


def test_the_answer_is_printed_as_validated_json(tmp_path: Path) -> None:
    result, bodies = _run(tmp_path, '{"name": "Paris", "population": 2100000}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"name": "Paris", "population": 2100000}
    assert bodies[-1]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_an_answer_that_never_validates_exits_1(tmp_path: Path) -> None:
    bad = '{"name": "Paris"}'
    result, _ = _run(tmp_path, bad, bad, bad)
    assert result.returncode == 1
    assert "does not match --output-schema" in result.stderr
    assert result.stdout.strip() == ""


def test_a_bad_schema_file_is_a_usage_error_naming_the_option(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"type": 12}')
    result = ponder("run", "x", "-m", "scripted", "--output-schema", str(broken))
    assert result.returncode == 2 and "--output-schema" in result.stderr
    assert "not a valid JSON Schema" in result.stderr
    missing = ponder("run", "x", "-m", "scripted", "--output-schema", str(tmp_path / "no.json"))
    assert missing.returncode == 2 and "cannot read it" in missing.stderr
