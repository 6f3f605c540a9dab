"""Configuration: both file layouts, environment overrides, bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from ponder import Agent
from ponder.config import AgentConfig, ConfigWarning, load_config
from ponder.exceptions import ConfigError

BOT_LAYOUT = """
[core.function_config]
agent_tool_call_limit = 4
agent_middle_message = false
agent_mcp_client_enable = true
agent_mcp_server_scripts = ['stdio://["node", "server.js"]']
use_minimal_context = false

[core.builtin]
tool_calling_mode = "agent"
loop_reasoning_trigger = 3

[core.builtin.react_config]
structured_reasoning = true
reasoning_depth = 5
enable_reflection = true
reflection_depth = 2
tool_prediction = true

[llm]
agent_strategy = "react"
agent_workflow = "step-react"

[llm.tools]
enable_report = true
report_invoke_level = "high"
"""


def test_defaults_follow_the_spec() -> None:
    config = AgentConfig()
    assert config.agent_tool_call_limit == 10
    assert config.agent_thought_mode is None  # the model's provider profile chooses
    assert Agent("openai:m").config.agent_thought_mode == "reasoning-required"
    assert config.loop_reasoning_trigger == 5
    assert (config.reasoning_depth, config.reflection_depth) == (3, 1)
    assert config.agent_step_token_budget == -1


def test_bot_layout_is_read(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(BOT_LAYOUT)
    config = load_config(path, environ={})
    assert config.agent_tool_call_limit == 4
    assert config.agent_middle_message is False
    assert config.agent_mcp_server_scripts == ('stdio://["node", "server.js"]',)
    assert config.loop_reasoning_trigger == 3
    assert (config.structured_reasoning, config.reasoning_depth) == (True, 5)
    assert (config.enable_reflection, config.reflection_depth) == (True, 2)
    assert config.agent_workflow == "step-react"
    assert (config.enable_report, config.report_invoke_level) == (True, "high")


def test_flat_ponder_toml_env_and_keyword_overrides(tmp_path: Path) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text('model = "openai:gpt-4o-mini"\n[agent]\nagent_tool_call_limit = 7\n')
    env = {"PONDER_AGENT_TOOL_CALL_LIMIT": "8", "PONDER_ENABLE_REFLECTION": "true"}
    config = load_config(path, environ=env, reflection_depth=3)
    assert config.model == "openai:gpt-4o-mini"
    assert config.agent_tool_call_limit == 8
    assert config.enable_reflection is True and config.reflection_depth == 3


def test_unknown_keys_warn_by_name_with_the_file_and_the_closest_key(tmp_path: Path) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text("agent_tool_call_limt = 3\nzzz_nothing_like_it = 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_config(path, environ={})
    messages = [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]
    assert messages == [
        f"{path}:1: unknown configuration key 'agent_tool_call_limt' ignored "
        "(did you mean 'agent_tool_call_limit'?)",
        f"{path}:2: unknown configuration key 'zzz_nothing_like_it' ignored",
    ]


def test_an_unknown_keyword_suggests_the_closest_key() -> None:
    with pytest.warns(ConfigWarning, match=r"'reflection_dept' ignored \(did you mean"):
        AgentConfig.from_mapping({"reflection_dept": 2})


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        (
            'agent_thought_mode = "deep"',
            "agent_thought_mode",
            "reasoning-required, reasoning, inline, reasoning-optional, chat",
        ),
        ("agent_tool_call_limit = 0", "agent_tool_call_limit", "greater than or equal to 1"),
        ('reflection_depth = "many"', "reflection_depth", "valid integer"),
        ('[core.builtin]\ntool_calling_mode = "auto"', "tool_calling_mode", "agent, rag, none"),
    ],
)
def test_invalid_values_name_the_key_and_the_allowed_values(
    tmp_path: Path, text: str, key: str, hint: str
) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=key) as info:
        load_config(path, environ={})
    assert hint in str(info.value)
    assert info.value.key == key


def test_unreadable_and_malformed_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml", environ={})
    bad = tmp_path / "bad.toml"
    bad.write_text("agent_tool_call_limit = = 3")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad, environ={})


def test_config_is_frozen() -> None:
    config = AgentConfig()
    with pytest.raises(ValueError):
        config.agent_tool_call_limit = 3  # type: ignore[misc]
    assert config.replace(agent_tool_call_limit=3).agent_tool_call_limit == 3


def test_compaction_max_tokens_from_the_bot_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[llm]\nenable_compaction = true\ncompaction_max_tokens = 512\n")
    assert load_config(path, environ={}).compaction_max_tokens == 512
    assert load_config(environ={"PONDER_COMPACTION_MAX_TOKENS": "0"}).compaction_max_tokens == 0


@pytest.mark.parametrize("value", [-1, 1, 63, "many"])
def test_a_bad_compaction_max_tokens_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match="compaction_max_tokens"):
        load_config(environ={}, compaction_max_tokens=value)


def test_retired_bot_keys_warn_with_the_reason_and_change_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[core.function_config]\nvalidate_tool_arguments = false\nagent_tool_call_limit = 4\n"
        "[core.builtin.react_config]\nreasoning_aware_tools = true\n"
    )
    with pytest.warns(ConfigWarning) as caught:
        config = load_config(path, environ={})
    notes = " ".join(str(w.message) for w in caught)
    assert "validate_tool_arguments (ponder always checks tool arguments" in notes
    assert "reasoning_aware_tools (ponder keeps the offered tools in a stable order)" in notes
    assert config == AgentConfig(agent_tool_call_limit=4)
