"""ponder's logs: silent by default, run id and pc on every record, the CLI's --log-level."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest

from ponder.models import ScriptedModel, call_tools, reply
from ponder.observability.logs import get_logger
from ponder.testing import FakeOpenAIServer
from tests.agent.scripts import PROMPT, make_agent, stop, think
from tests.cli.test_commands import agent_script, one_line_error, ponder


def script() -> list:
    return [
        think("Multiply."),
        call_tools(("multiply", {"a": "x", "b": 2})),
        call_tools(("multiply", {"a": 2, "b": 3})),
        think("Done.", "multiplied"),
        stop(),
        reply("6"),
    ]


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def collected() -> Iterator[Collect]:
    handler = Collect()
    logger = logging.getLogger("ponder")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_every_record_of_a_run_carries_its_run_id_and_pc(collected: Collect) -> None:
    result = await make_agent(ScriptedModel(script())).run(PROMPT)
    records = collected.records
    messages = [r.getMessage() for r in records]
    assert messages[0].startswith("run started: model scripted")
    assert messages[-1] == "run finished: answered"
    assert any(m.startswith("tool multiply (call_2) invalid_arguments:") for m in messages)
    assert any(m.startswith("tool multiply (call_3) finished in") for m in messages)
    assert all(r.name.startswith("ponder") for r in records)
    assert {r.run_id for r in records} == {result.run_id}  # type: ignore[attr-defined]
    failed = next(r for r in records if "invalid_arguments" in r.getMessage())
    assert failed.levelno == logging.WARNING
    assert failed.pc == 4 and failed.node == "SINGLE_STRATEGY_CALL"  # type: ignore[attr-defined]


async def test_a_library_record_inside_a_tool_gets_the_run_fields(collected: Collect) -> None:
    from ponder.agent import Agent
    from ponder.tools import tool

    @tool
    def noisy() -> str:
        """Log something."""
        get_logger("ponder.tools.noisy").info("inside the tool")
        return "ok"

    model = ScriptedModel(
        [think("Go."), call_tools(("noisy", {})), think("Done.", "x"), stop(), reply("ok")]
    )
    agent = Agent(model, tools=[noisy], enable_thinking_tool=False)
    result = await agent.run("Be noisy.")
    (inside,) = [r for r in collected.records if r.getMessage() == "inside the tool"]
    assert inside.run_id == result.run_id and inside.pc == 4  # type: ignore[attr-defined]
    get_logger("ponder.outside").info("after the run")
    assert collected.records[-1].run_id == "-"  # type: ignore[attr-defined]


def test_nothing_is_printed_by_default() -> None:
    code = (
        "import logging; from ponder.models import ScriptedModel;"
        "from tests.agent.scripts import make_agent, think, stop, PROMPT;"
        "from ponder.models import reply;"
        "r = make_agent(ScriptedModel([think('x'), stop(), reply('y')])).run_sync(PROMPT);"
        "logging.getLogger('ponder.x').warning('not shown either');"
        "print(r.output)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "y\n" and done.stderr == ""


def test_the_cli_log_level_shows_records_with_run_and_pc() -> None:
    with FakeOpenAIServer(agent_script()) as provider:
        result = ponder(
            "--log-level",
            "debug",
            "run",
            "Go",
            "-m",
            "openai:fake-model",
            "--json",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=provider.base_url,
        )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    started = next(line for line in lines if "run started" in line)
    assert " INFO    ponder.run run=" in started and "run=- " not in started
    assert any(" pc=4 " in line and "round 1" in line for line in lines)
    assert any("run finished: answered" in line for line in lines)


def test_an_unknown_log_level_is_one_clear_error() -> None:
    result = ponder("--log-level", "loud", "dis", "react")
    assert result.returncode == 2
    assert "unknown log level 'loud'" in one_line_error(result)


def test_the_info_level_shows_the_runs_rounds_and_tool_calls() -> None:
    with FakeOpenAIServer(agent_script()) as provider:
        result = ponder(
            "--log-level",
            "info",
            "run",
            "Go",
            "-m",
            "openai:fake-model",
            "--json",
            OPENAI_API_KEY="k",
            OPENAI_BASE_URL=provider.base_url,
        )
    assert result.returncode == 0, result.stderr
    records = [line for line in result.stderr.splitlines() if " INFO " in line]
    assert any("round 1" in line for line in records)
    assert any(" finished in " in line and "tool " in line for line in records)
    assert not any(" DEBUG " in line for line in result.stderr.splitlines())


async def test_a_resumed_run_is_logged_with_its_run_id(collected: Collect) -> None:
    from ponder.agent import Agent
    from ponder.store import MemoryStore
    from ponder.tools import tool

    @tool(requires_approval=True)
    def deploy(target: str) -> str:
        """Deploy.

        Args:
            target: Where to.
        """
        return f"deployed to {target}"

    store = MemoryStore()
    steps = [call_tools(("deploy", {"target": "prod"})), stop(), reply("Deployed.")]
    agent = Agent(
        ScriptedModel(steps),
        tools=[deploy],
        store=store,
        enable_thinking_tool=False,
        agent_thought_mode="chat",
    )
    suspended = await agent.run("Deploy to prod.")
    assert suspended.status == "suspended"
    collected.records.clear()
    result = await agent.resume(suspended.run_id, True)
    assert result.output == "Deployed."
    messages = [r.getMessage() for r in collected.records]
    assert any(m.startswith("run resumed") for m in messages), messages
    assert any("deploy" in m for m in messages)
    assert {getattr(r, "run_id", None) for r in collected.records} == {suspended.run_id}
