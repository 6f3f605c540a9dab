"""``ponder run --json`` stays one JSON event per line, whatever the tools print."""

from __future__ import annotations

import json

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .test_commands import ponder


def test_tool_prints_go_to_stderr_not_between_json_lines() -> None:
    script = [
        FakeReply(
            tool_calls=[
                FakeToolCall(name="shout", arguments={"text": "hello"}),
                FakeToolCall(name="whisper", arguments={"text": "psst"}),
            ]
        ),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "done"})]),
        FakeReply(content="Both printed."),
    ]
    with FakeOpenAIServer(script) as server:
        result = ponder(
            "run",
            "Make noise",
            "--json",
            "-m",
            "openai:fake-model",
            "--tools",
            "tests.cli.noisy_tools:TOOLS",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=server.base_url,
            PONDER_AGENT_THOUGHT_MODE="chat",
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["kind"] == "run_finished" and events[-1]["output"] == "Both printed."
    assert "SHOUT hello" in result.stderr and "WHISPER psst" in result.stderr
