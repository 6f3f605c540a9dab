"""Config keys described from the pydantic fields; changes validated and written back to TOML."""

from __future__ import annotations

import inspect
import os
import re
import stat
from pathlib import Path

import pytest

from ponder.config import AgentConfig, load_config
from ponder.config.fields import SECTIONS, apply_changes, config_fields, describe_config
from ponder.config.file import write_changes
from ponder.exceptions import ConfigError

BOT_FILE = """\
# the bot's settings
[core.function_config]
agent_tool_call_limit = 4  # rounds per turn
use_minimal_context = false

[llm]
# which loop
agent_workflow = "react"
max_context = 8000

[llm.tools]
enable_report = false
"""


def test_every_key_is_described_from_its_field() -> None:
    fields = {f.key: f for f in config_fields()}
    assert list(fields) == list(AgentConfig.model_fields)
    assert all(f.description for f in fields.values()), [
        k for k, f in fields.items() if not f.description
    ]
    limit = fields["agent_tool_call_limit"]
    assert (limit.section, limit.kind, limit.default, limit.bounds) == (
        "core.function_config",
        "int",
        10,
        {"ge": 1.0},
    )
    workflow = fields["agent_workflow"]
    assert (workflow.section, workflow.kind, workflow.choices) == (
        "llm",
        "choice",
        ("react", "step-react"),
    )
    assert fields["reflection_depth"].section == "core.builtin.react_config"
    assert fields["report_invoke_level"].section == "llm.tools"
    assert fields["stall_action"].section == "core.builtin"
    assert fields["max_tokens"].nullable and fields["max_tokens"].kind == "int"
    assert fields["agent_mcp_server_scripts"].kind == "list"
    assert fields["model_capabilities"].kind == "table"
    assert fields["enable_todo_tool"].section == "agent"


def test_described_sections_follow_the_spec_and_hide_the_key() -> None:
    sections = describe_config(AgentConfig(api_key="sk-secret", agent_tool_call_limit=3))
    assert [s["name"] for s in sections] == list(SECTIONS)
    keys = {k["key"]: k for s in sections for k in s["keys"]}
    assert keys["api_key"]["value"] is True and "sk-secret" not in str(sections)
    assert keys["agent_tool_call_limit"]["value"] == 3
    assert keys["agent_tool_call_limit"]["is_default"] is False
    assert keys["agent_mcp_server_scripts"]["value"] == []


def test_changes_fail_with_the_loaders_messages(tmp_path: Path) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text('agent_workflow = "sideways"\n')
    with pytest.raises(ConfigError) as from_file:
        load_config(path, environ={})
    with pytest.raises(ConfigError) as from_edit:
        apply_changes(AgentConfig(), {"agent_workflow": "sideways"})
    assert str(from_edit.value) == str(from_file.value)
    assert "allowed: react, step-react" in str(from_edit.value)
    with pytest.raises(ConfigError, match="did you mean 'agent_tool_call_limit'"):
        apply_changes(AgentConfig(), {"agent_tool_call_limt": 3})
    with pytest.raises(ConfigError, match="agent_tool_call_limit"):
        apply_changes(AgentConfig(), {"agent_tool_call_limit": 0})
    reset = apply_changes(AgentConfig(agent_tool_call_limit=3), {"agent_tool_call_limit": None})
    assert reset.agent_tool_call_limit == 10


def test_writing_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(BOT_FILE)
    write_changes(
        path,
        {
            "agent_tool_call_limit": 6,
            "agent_workflow": "step-react",
            "session_tokens_windows": 16000,  # the bot calls it max_context
            "reasoning_depth": 4,  # a section the file does not have yet
            "agent_mcp_server_scripts": ("stdio://x",),
            "enable_report": None,
        },
    )
    text = path.read_text()
    assert text.startswith("# the bot's settings\n[core.function_config]\n")
    assert "agent_tool_call_limit = 6  # rounds per turn\n" in text
    assert '# which loop\nagent_workflow = "step-react"\n' in text
    assert "max_context = 16000" in text and "session_tokens_windows" not in text
    assert "[core.builtin.react_config]\nreasoning_depth = 4" in text
    assert "enable_report" not in text
    loaded = load_config(path, environ={})
    assert (loaded.agent_tool_call_limit, loaded.agent_workflow) == (6, "step-react")
    assert (loaded.session_tokens_windows, loaded.reasoning_depth) == (16000, 4)
    assert loaded.agent_mcp_server_scripts == ("stdio://x",)


def test_a_flat_file_gets_top_level_keys(tmp_path: Path) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text('model = "openai:gpt-4o-mini"\n\n[agent]\nmax_retries = 1\n')
    write_changes(path, {"max_retries": 2, "enable_todo_tool": True})
    text = path.read_text()
    assert text.startswith('model = "openai:gpt-4o-mini"\n')
    assert "[agent]\nmax_retries = 2\nenable_todo_tool = true\n" in text
    plain = tmp_path / "plain.toml"
    plain.write_text("# nothing yet\n")
    write_changes(plain, {"agent_tool_call_limit": 2})
    assert plain.read_text() == "# nothing yet\nagent_tool_call_limit = 2\n"


def test_a_read_only_or_broken_file_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(BOT_FILE)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    with pytest.raises(ConfigError, match="read-only; nothing was written"):
        write_changes(path, {"agent_tool_call_limit": 6})
    assert path.read_text() == BOT_FILE
    path.chmod(0o644)
    broken = tmp_path / "broken.toml"
    broken.write_text("[llm\nagent_workflow = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        write_changes(broken, {"agent_tool_call_limit": 6})
    assert broken.read_text() == "[llm\nagent_workflow = 1\n"
    with pytest.raises(ConfigError, match="cannot read the config file"):
        write_changes(tmp_path / "missing.toml", {"agent_tool_call_limit": 6})
    assert sorted(os.listdir(tmp_path)) == ["broken.toml", "config.toml"]


def test_a_symlinked_file_is_edited_where_it_lives(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("agent_tool_call_limit = 4\n")
    real.chmod(0o600)
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    write_changes(link, {"agent_tool_call_limit": 5})
    assert link.is_symlink() and real.read_text() == "agent_tool_call_limit = 5\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


def test_the_sections_match_the_comments_in_agent_config() -> None:
    """``# [llm]``-style comments in config.py head each group of fields; the page agrees."""
    comment_section = {"ponder's own": "agent"}
    section, expected = "", {}
    for line in inspect.getsource(AgentConfig).splitlines():
        heading = re.fullmatch(r"    # \[?([\w.' ]+?)\]?", line)
        field = re.match(r"    (\w+): ", line)
        if heading:
            section = comment_section.get(heading.group(1), heading.group(1))
        elif field and field.group(1) in AgentConfig.model_fields:
            expected[field.group(1)] = section
    assert {f.key: f.section for f in config_fields()} == expected
