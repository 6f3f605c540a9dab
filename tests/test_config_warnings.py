"""Configuration warnings point at the user's file and line, catch misspelt variables and
give true reasons; through the library and the ``ponder`` command."""

from __future__ import annotations

import warnings
from pathlib import Path

from ponder.config import ConfigWarning, load_config
from tests.cli.test_commands import ponder


def caught_warnings(path: Path | None, environ: dict[str, str]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_config(path, environ=environ)
    return [w for w in caught if issubclass(w.category, ConfigWarning)]


def test_a_file_warning_is_located_at_the_users_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[core.function_config]\nagent_tool_call_limit = 4\n\n[llm]\nmax_fallbacks = 2\n"
        "enable_multi_modal = true\n"
    )
    found = caught_warnings(path, {})
    assert [(w.filename, w.lineno) for w in found] == [(str(path), 5)]
    message = str(found[0].message)
    assert message.startswith(f"{path}:5: [llm] keys without effect")
    assert "max_fallbacks (fallbacks are the models listed in 'model'" in message
    assert "enable_multi_modal (images and files are always accepted" in message
    assert "text only" not in message and "one model per agent" not in message


def test_a_misspelt_ponder_variable_is_named_with_the_right_one() -> None:
    found = caught_warnings(None, {"PONDER_AGENT_TOOL_CALL_LIMT": "3", "PONDER_STORE": "x"})
    assert [str(w.message) for w in found] == [
        "environment variable PONDER_AGENT_TOOL_CALL_LIMT ignored: "
        "did you mean PONDER_AGENT_TOOL_CALL_LIMIT?"
    ]


def test_the_cli_prints_config_warnings_as_lines_naming_the_users_file(tmp_path: Path) -> None:
    path = tmp_path / "ponder.toml"
    path.write_text("agent_thought_mode = 'chat'\nreflection_dept = 2\n")
    done = ponder("run", "hi", "-m", "scripted", "-c", str(path), PONDER_ENABLE_REFLECTON="true")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {path}:2: unknown configuration key 'reflection_dept' ignored "
        "(did you mean 'reflection_depth'?)",
        "warning: environment variable PONDER_ENABLE_REFLECTON ignored: "
        "did you mean PONDER_ENABLE_REFLECTION?",
    ]
