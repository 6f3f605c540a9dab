"""The existing bot's config.toml, both layouts: every key maps or warns, values arrive.

The fixtures in tests/fixtures/bot are the files AmritaBot writes (its Config model with
AmritaCore's embedded, dumped to TOML), with every agent key set away from its default.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.config import AgentConfig, ConfigWarning, load_config
from ponder.config.bot import BOT_ONLY
from ponder.exceptions import ConfigError
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

FIXTURES = Path(__file__).parent / "fixtures" / "bot"
PONDER = str(Path(sys.executable).with_name("ponder"))

CURRENT = {
    "use_minimal_context": True,
    "agent_tool_call_limit": 6,
    "agent_tool_refusal_rounds": 3,
    "validate_tool_arguments": False,
    "agent_step_token_budget": 4000,
    "agent_middle_message": False,
    "agent_mcp_client_enable": True,
    "agent_mcp_server_scripts": ('stdio://["node", "server.js"]',),
    "max_tokens": 1500,
    "compaction_max_tokens": 0,
    "session_tokens_windows": 32768,
    "llm_timeout": 45.0,
    "max_retries": 5,
    "context_strategy": "slide",
    "compaction_trigger_ratio": 0.8,
    "slide_target_ratio": 0.6,
    "memory_length_limit": 0,
    "tool_calling_mode": "agent",
    "agent_thought_mode": "reasoning-optional",
    "loop_reasoning_trigger": 4,
    "structured_reasoning": True,
    "reasoning_depth": 6,
    "enable_reflection": True,
    "reflection_depth": 3,
    "reasoning_aware_tools": True,
    "tool_prediction": True,
    "model": "openai:deepseek-chat",
    "base_url": "https://api.deepseek.com/v1",
    "api_key": "sk-bot-key",
    "temperature": 0.3,
    "report_block_message": ("Blocked (one).", "Blocked (two)."),
    "agent_strategy": "react",
    "agent_workflow": "step-react",
    "enable_report": True,
    "report_exclude_system_prompt": True,
    "report_exclude_context": True,
    "report_then_block": False,
    "report_invoke_level": "high",
}
OLD = {
    "model": "openai:qwen-plus",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key": "sk-old-key",
    "temperature": 0.9,
    "memory_length_limit": 40,
    "max_tokens": 800,
    "session_tokens_windows": 5000,
    "llm_timeout": 30.0,
    "max_retries": 0,  # auto_retry = false
    "enable_compaction": False,  # enable_memory_abstract = false
    "report_block_message": ("Not this one, sorry.",),
    "agent_strategy": "no-action",
    "use_minimal_context": True,
    "enable_report": True,
    "report_exclude_system_prompt": False,
    "report_exclude_context": True,
    "report_then_block": True,
    "report_invoke_level": "low",
    "agent_tool_call_limit": 3,
    "agent_thought_mode": "reasoning",
    "agent_middle_message": False,
    "agent_mcp_client_enable": False,
    "tool_calling_mode": "rag",
}


def load_noting(path: Path) -> tuple[AgentConfig, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = load_config(path, environ={})
    return config, [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]


def leaf_keys(table: dict[str, Any]) -> set[str]:
    keys: set[str] = set()
    for key, value in table.items():
        keys |= leaf_keys(value) if isinstance(value, dict) and value else {key}
    return keys


@pytest.mark.parametrize(("name", "expected"), [("current", CURRENT), ("old", OLD)])
def test_every_agent_key_of_the_bot_layout_arrives(name: str, expected: dict[str, Any]) -> None:
    config, notes = load_noting(FIXTURES / f"{name}.toml")
    kept = {k: v for k, v in expected.items() if k in AgentConfig.model_fields}
    arrived = {key: getattr(config, key) for key in kept}
    assert arrived == kept
    retired = expected.keys() - kept.keys()  # keys ponder no longer has warn instead
    assert all(any(key in note for note in notes) for key in retired)


@pytest.mark.parametrize("name", ["current", "old"])
def test_every_key_maps_or_is_named_in_a_warning(name: str) -> None:
    path = FIXTURES / f"{name}.toml"
    config, notes = load_noting(path)
    document = tomllib.loads(path.read_text())
    mapped = {"block_msg", "enable_memory_abstract", "auto_retry", "require_tools", "preset"}
    bot_only = {key for key in document if key in BOT_ONLY}
    agent_part = {k: v for k, v in document.items() if k not in bot_only}
    dropped = [
        key
        for key in leaf_keys(agent_part)
        if key not in AgentConfig.model_fields
        and key not in mapped
        and not any(f"{key} (" in note or f"{key} = " in note for note in notes)
    ]
    assert dropped == []
    assert any(all(table in note for table in bot_only) for note in notes)
    assert len(bot_only) >= 8
    assert config.model is not None


def test_bot_values_ponder_used_to_refuse_are_accepted_with_their_meaning(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[core.llm]\nmemory_length_limit = 0\ncompaction_max_tokens = 0\nmax_retries = 50\n"
        'session_tokens_windows = 100\n[core.builtin]\nagent_thought_mode = "reasoning-optional"\n'
    )
    config, _ = load_noting(path)
    assert (config.memory_length_limit, config.compaction_max_tokens) == (0, 0)
    assert config.session_tokens_windows == 100 and config.max_retries == 50
    assert config.agent_thought_mode == "reasoning-optional"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "[core.llm]\ncompaction_trigger_ratio = 0.8\nslide_target_ratio = 0.9",
            "slide_target_ratio",
        ),
        ("[llm]\nblock_msg = []", "report_block_message"),
        ('[llm]\nblock_msg = "one"\n[llm.tools]\nreport_then_block = [true]', "report_then_block"),
        ("[core.function_config]\nagent_tool_refusal_rounds = 0", "agent_tool_refusal_rounds"),
        ("[core.llm]\nmemory_length_limit = -1", "memory_length_limit"),
    ],
)
def test_malformed_bot_values_are_config_errors_naming_the_key(
    tmp_path: Path, text: str, key: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as info:
        load_noting(path)
    assert info.value.key == key


def test_an_unknown_key_in_a_bot_table_warns_with_its_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[core.llm]\nmax_tokenz = 3\n")
    with pytest.warns(
        ConfigWarning,
        match=r"config\.toml:2: .*'max_tokenz' in \[core\.llm\] ignored "
        r"\(did you mean 'max_tokens'\?\)",
    ):
        load_config(path, environ={})


def test_the_old_layout_runs_through_the_cli_with_its_preset_and_block_message(
    tmp_path: Path,
) -> None:
    verdict = {"flagged": True, "category": "abuse", "reason": "insult"}
    with FakeOpenAIServer([FakeReply(content=json.dumps(verdict))]) as server:
        text = (FIXTURES / "old.toml").read_text().replace("http://127.0.0.1:9/v1", server.base_url)
        path = tmp_path / "config.toml"
        path.write_text(text)
        done = subprocess.run(
            [PONDER, "run", "say something rude", "--config", str(path), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    finished = next(e for e in events if e["kind"] == "run_finished")
    assert finished["output"] == "Not this one, sorry."
    [body] = server.requests
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("qwen-plus", 0.9, 800)
    assert "Strictness: low." in body["messages"][0]["content"]


async def test_the_current_layout_drives_an_agent_on_the_wire() -> None:
    def script(body: dict[str, Any]) -> FakeReply:
        if body.get("response_format") or "content moderation" in str(body["messages"][0]):
            return FakeReply(content=json.dumps({"flagged": True, "category": "x", "reason": "y"}))
        if any(m["role"] == "tool" for m in body["messages"]):
            return FakeReply(content="done")
        return FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        loaded = load_config(FIXTURES / "current.toml", environ={})
    async with FakeOpenAIServer(script) as server:
        config = loaded.replace(
            base_url=server.base_url,
            agent_workflow="react",
            agent_mcp_client_enable=False,
            enable_reflection=False,
        )
        agent = Agent(config=config)
        events = [e async for e in agent.stream("hello")]
        await agent.model.aclose()  # type: ignore[attr-defined]
    kinds = [e.kind for e in events]
    assert "report_raised" in kinds and events[-1].output == "done"  # type: ignore[union-attr]
    report, *rest = server.requests
    assert all(b["model"] == "deepseek-chat" and b["temperature"] == 0.3 for b in server.requests)
    assert all(b["max_tokens"] == 1500 for b in server.requests)
    # reasoning-optional: think_and_reason is offered, never forced
    action = rest[0]
    assert "think_and_reason" in [t["function"]["name"] for t in action["tools"]]
    assert all(isinstance(b.get("tool_choice", "auto"), str) for b in rest)
    # report_exclude_*: only the message itself is classified
    assert [m["role"] for m in report["messages"]] == ["system", "user"]
