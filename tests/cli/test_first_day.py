"""What a new user tries first: --version, instructions from the command line and TOML,
and a mistyped store URL."""

from __future__ import annotations

from pathlib import Path

from ponder import __version__
from ponder.testing import FakeOpenAIServer

from .test_commands import ROOT, one_line_error, ponder


def test_version_prints_the_package_version() -> None:
    done = ponder("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ponder {__version__}"


def system_prompt(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


def test_instructions_come_from_toml_and_the_command_line_overrides_them(tmp_path: Path) -> None:
    config = tmp_path / "ponder.toml"
    config.write_text('agent_strategy = "no-action"\ninstructions = "Answer like a pirate."\n')
    with FakeOpenAIServer(["arr", "bonjour"]) as server:
        url = server.base_url
        common = ("--model", "openai:gpt-4o-mini", "--config", str(config), "--json")
        from_toml = ponder("run", *common, "hi", OPENAI_BASE_URL=url, OPENAI_API_KEY="k")
        overridden = ponder(
            "run",
            *common,
            "--system",
            "Answer in French.",
            "hi",
            OPENAI_BASE_URL=url,
            OPENAI_API_KEY="k",
        )
    assert from_toml.returncode == 0, from_toml.stderr
    assert overridden.returncode == 0, overridden.stderr
    first, second = server.requests
    assert "Answer like a pirate." in system_prompt(first)
    assert "Answer in French." in system_prompt(second)
    assert "pirate" not in system_prompt(second)


def test_a_sqlite_url_with_one_slash_is_refused_and_creates_nothing() -> None:
    done = ponder("run", "--model", "scripted", "--store", "sqlite:/tmp/runs.db", "hi")
    assert done.returncode == 2
    assert "three slashes" in one_line_error(done)
    assert not (ROOT / "sqlite:").exists()
