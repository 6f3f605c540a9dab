"""The settings page in headless Chromium: grouped keys, the loader's errors, saving to the file."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.config import load_config
from ponder.models import ScriptedModel, reply
from ponder.server.app import create_app
from tests.server.live import live_server

from .conftest import PHONE

CONFIG = """\
# served by ponder
[core.function_config]
agent_tool_call_limit = 5  # rounds

[llm]
agent_workflow = "react"
"""
SPEC_SECTIONS = [
    "[core.function_config]",
    "[core.builtin]",
    "[core.builtin.react_config]",
    "[llm]",
    "[llm.tools]",
]


@pytest.fixture
def expect(sync_api: Any) -> Any:
    return sync_api.expect


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    return path


def served(path: Path) -> Any:
    agent = Agent(ScriptedModel([reply("hi")]), config=load_config(path, environ={}))
    return live_server(create_app(agent, config_path=path))


def key_row(page: Any, key: str) -> Any:
    return page.locator(f"[data-testid=config-key][data-key={key}]")


def test_the_settings_are_grouped_the_specs_way_and_saved_with_comments(
    open_page: Any, expect: Any, config_file: Path
) -> None:
    with served(config_file) as server:
        watched = open_page(allowed=(400,))
        page = watched.page
        page.goto(server.url + "/")
        page.get_by_test_id("nav-settings").click()
        headings = page.locator("[data-testid=config-section] h3")
        expect(headings.first).to_have_text(SPEC_SECTIONS[0])
        assert headings.all_inner_texts()[:5] == SPEC_SECTIONS
        limit = key_row(page, "agent_tool_call_limit")
        expect(limit).to_contain_text("Tool rounds a turn may take")
        expect(limit).to_contain_text("default 10")
        expect(limit).to_contain_text("≥ 1")
        expect(key_row(page, "agent_workflow")).to_contain_text("one of react, step-react")
        expect(page.get_by_test_id("config-path")).to_have_text(str(config_file))

        # an invalid value: the loader's message at the key, what was typed stays
        page.fill("#cfg-agent_tool_call_limit", "0")
        page.get_by_test_id("config-save").first.click()
        error = limit.get_by_test_id("config-key-error")
        expect(error).to_contain_text("agent_tool_call_limit: Input should be greater than or")
        expect(page.locator("#cfg-agent_tool_call_limit")).to_have_value("0")
        assert config_file.read_text() == CONFIG
        watched.check("settings-invalid")

        page.fill("#cfg-agent_tool_call_limit", "3")
        page.select_option("#cfg-agent_workflow", "step-react")
        page.get_by_test_id("config-save").first.click()
        expect(page.get_by_test_id("config-info")).to_contain_text("saved to")
        expect(page.locator("#cfg-agent_tool_call_limit")).to_have_value("3")
        expect(limit.get_by_test_id("config-key-error")).to_have_count(0)
    assert config_file.read_text() == CONFIG.replace("= 5  # rounds", "= 3  # rounds").replace(
        '"react"', '"step-react"'
    )


def test_a_read_only_file_says_so_and_loses_nothing(
    open_page: Any, expect: Any, config_file: Path
) -> None:
    config_file.chmod(stat.S_IRUSR)
    with served(config_file) as server:
        watched = open_page(PHONE, allowed=(409,))
        page = watched.page
        page.goto(server.url + "/#settings")
        page.fill("#cfg-agent_tool_call_limit", "7")
        page.get_by_test_id("config-save").first.click()
        expect(page.get_by_test_id("config-error")).to_contain_text(
            "the config file is read-only; nothing was written"
        )
        expect(page.locator("#cfg-agent_tool_call_limit")).to_have_value("7")
        assert config_file.read_text() == CONFIG
        watched.check(
            "settings-read-only-390",
            visible=("[data-testid=config-error]", "#cfg-agent_tool_call_limit", "#config-apply"),
        )
        page.get_by_test_id("config-apply").first.click()  # for new runs, without the file
        expect(page.get_by_test_id("config-info")).to_contain_text("applied")
        page.reload()
        expect(page.locator("#cfg-agent_tool_call_limit")).to_have_value("7")
    assert config_file.read_text() == CONFIG
