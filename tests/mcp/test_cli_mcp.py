"""``ponder run`` with MCP servers: a server's prompt as the task, elicitation on the terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.cli.test_commands import ponder
from tests.mcp.conftest import SERVER


def config_file(tmp_path: Path, extra: str = "") -> Path:
    server = json.dumps([sys.executable, str(SERVER), "stdio", "--name", "fix"])
    path = tmp_path / "ponder.toml"
    path.write_text(
        "agent_mcp_client_enable = true\n"
        f"agent_mcp_server_scripts = [{json.dumps('stdio://' + server)}]\n"
        'agent_thought_mode = "chat"\nenable_thinking_tool = false\n' + extra
    )
    return path


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_an_mcp_prompt_is_the_task(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    result = ponder(
        "run",
        "--mcp-prompt",
        "mcp_server/review",
        "--mcp-arg",
        "topic=caching",
        "-m",
        "scripted",
        "--config",
        str(config),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    events = events_of(result.stdout)
    assert events[0]["prompt"] == "Please review caching carefully."
    assert events[-1]["kind"] == "run_finished"


def test_an_mcp_resource_is_attached_to_the_task(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    result = ponder(
        "run",
        "Summarize it.",
        "--mcp-resource",
        "mcp_server=note://greeting",
        "-m",
        "scripted",
        "--config",
        str(config),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    prompt = events_of(result.stdout)[0]["prompt"]
    assert "hello from the fixture" in prompt and prompt.endswith("Summarize it.")
    bad = ponder(
        "run",
        "x",
        "--mcp-resource",
        "nowhere=note://greeting",
        "-m",
        "scripted",
        "--config",
        str(config),
    )
    assert bad.returncode == 2 and "expects SERVER=URI" in bad.stderr


def test_bad_mcp_prompt_input_is_one_line_with_a_hint(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    cases = [
        (["--mcp-prompt", "nosuch"], "no server offers it"),
        (["--mcp-prompt", "other/review"], "no MCP server 'other'"),
        (["--mcp-prompt", "review", "--mcp-arg", "topic"], "expects key=value"),
        (["--mcp-prompt", "review"], "topic"),  # a required argument missing
    ]
    for args, expected in cases:
        result = ponder("run", *args, "-m", "scripted", "--config", str(config))
        assert result.returncode == 2, (args, result.stderr)
        assert expected in result.stderr and "Traceback" not in result.stderr


def contact_script() -> list[FakeReply]:
    def call(name: str, **arguments: Any) -> FakeReply:
        return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])

    return [
        call("ask_contact"),
        call("ask_contact"),
        call("agent_stop", result="done"),
        FakeReply(content="Contacts handled."),
    ]


def test_elicitation_is_answered_on_the_terminal_and_checked(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    with FakeOpenAIServer(contact_script()) as provider:
        result = ponder(
            "run",
            "add contacts",
            "--json",
            "-m",
            "openai:fake-model",
            "--config",
            str(config),
            stdin="Ada\n36\nBob\nold\n",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=provider.base_url,
        )
    assert result.returncode == 0, result.stderr
    assert "Who should I add?" in result.stderr and "Age (integer)" in result.stderr
    events = events_of(result.stdout)
    outputs = [e.get("output") or e.get("error") for e in events if e["kind"].startswith("tool_")]
    finished = [o for o in outputs if o]
    assert "added Ada (36)" in finished
    assert any("does not match the requested schema" in o for o in finished)
    statuses = [e["data"]["status"] for e in events if e.get("type") == "elicitation"]
    assert statuses == ["requested", "accept", "requested", "invalid"]
    assert events[-1]["kind"] == "run_finished"


def test_a_stored_run_suspends_on_a_question_and_resumes_with_the_answer(
    tmp_path: Path,
) -> None:
    config = config_file(tmp_path)
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    agent = ["-m", "openai:fake-model", "--config", str(config)]
    script = [contact_script()[0], *contact_script()[2:]]
    with FakeOpenAIServer(script) as provider:
        env: dict[str, Any] = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": provider.base_url}
        first = ponder("run", "add a contact", "--store", store, *agent, stdin="", **env)
        assert first.returncode == 3, first.stderr
        assert "waiting for input" in first.stdout + first.stderr
        assert "Who should I add?" in first.stdout + first.stderr
        assert "age: integer" in first.stdout + first.stderr
        assert "--answer" in first.stdout + first.stderr and "<integer>" in first.stdout
        said = first.stdout + first.stderr
        run_id = said.split("resume with: ponder runs resume ")[1].split()[0]
        shown = ponder("runs", "show", run_id, "--store", store, "--json")
        [question] = json.loads(shown.stdout)["pending_questions"]
        assert question["schema"]["required"] == ["name", "age"]
        base = ("runs", "resume", run_id, "--store", store, *agent)
        missing = ponder(*base, **env)
        assert missing.returncode == 2 and "pass --answer JSON" in missing.stderr
        bad = ponder(*base, "--answer", '{"action": "accept", "content": {"name": "Ada"}}', **env)
        assert bad.returncode == 2 and "'age' is a required property" in bad.stderr
        assert "Traceback" not in bad.stderr
        broken = ponder(*base, "--answer", "{nope", **env)
        assert broken.returncode == 2 and "--answer is not valid JSON" in broken.stderr
        good = '{"action": "accept", "content": {"name": "Ada", "age": 36}}'
        done = ponder(*base, "--answer", good, "--json", **env)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    finished = [e["output"] for e in events if e["kind"] == "tool_call_finished"]
    assert finished == ["added Ada (36)"]
    assert events[-1]["kind"] == "run_finished"


def test_a_failing_server_is_named_with_its_reason_and_stderr(tmp_path: Path) -> None:
    crash = "import sys; sys.stderr.write('boom: no API key set\\n'); sys.exit(3)"
    entries = [
        {"name": "crasher", "command": [sys.executable, "-c", crash]},
        {"name": "ghost", "command": ["no-such-mcp-server-xyz"]},
    ]
    path = tmp_path / "ponder.toml"
    path.write_text(
        'agent_mcp_client_enable = true\nagent_thought_mode = "chat"\n'
        "enable_thinking_tool = false\n"
        + "".join(
            f"[[agent_mcp_server_scripts]]\nname = {json.dumps(e['name'])}\n"
            f"command = {json.dumps(e['command'])}\n"
            for e in entries
        )
    )
    shown = ponder("run", "hi", "-m", "scripted", "--config", str(path))
    assert shown.returncode == 0, shown.stderr
    said = " ".join((shown.stdout + shown.stderr).split())
    assert "crasher connect_failed" in said and "stderr: boom: no API key set" in said
    assert "ghost connect_failed" in said and "No such file or directory" in said
    result = ponder("run", "hi", "-m", "scripted", "--config", str(path), "--json")
    failed = {
        e["server"]: e["data"]["error"]
        for e in events_of(result.stdout)
        if e.get("type") == "connect_failed"
    }
    assert "boom: no API key set" in failed["crasher"]
    assert "FileNotFoundError" in failed["ghost"]
    statuses = [e["type"] for e in events_of(result.stdout) if e.get("server") == "crasher"]
    assert statuses.count("server_failed") == 1
