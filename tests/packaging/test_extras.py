"""A plain install is light: each heavy part is an extra, and its absence names the extra.

Each test runs ponder in a subprocess in which the extra's modules cannot be imported
(``tests/support/blocker``), as in an environment where the extra is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ponder.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[2]
BLOCKER = ROOT / "tests" / "support" / "blocker"
PONDER = str(Path(sys.executable).with_name("ponder"))
ALL_EXTRAS = ",".join(module for modules in EXTRAS.values() for module in modules)


def without(modules: str, *command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PONDER_"))}
    env.update(
        PYTHONPATH=f"{BLOCKER}{os.pathsep}{ROOT}",
        PONDER_BLOCK_MODULES=modules,
        NO_COLOR="1",
        COLUMNS="200",
        ANTHROPIC_API_KEY="k",
    )
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=60, env=env, cwd=cwd
    )


def python(modules: str, code: str) -> subprocess.CompletedProcess[str]:
    return without(modules, sys.executable, "-c", code)


def test_the_blocker_really_blocks() -> None:
    done = python("fastapi", "import fastapi")
    assert done.returncode == 1
    assert "No module named 'fastapi'" in done.stderr


LIBRARY_ONLY = """
import sys
from ponder import Agent, tool
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

@tool
def add(a: int, b: int) -> int:
    '''Add two integers.

    Args:
        a: The first number.
        b: The second number.
    '''
    return a + b

def call(name, **arguments):
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)])

script = [
    call("think_and_reason", last_step="", summary="Add them."),
    call("add", a=2, b=3),
    call("think_and_reason", last_step="added", summary="Done."),
    call("agent_stop", result="5"),
    FakeReply(content="2 + 3 = 5"),
]
with FakeOpenAIServer(script) as server:
    agent = Agent("openai:gpt-4o-mini", tools=[add], base_url=server.base_url, api_key="k")
    print(agent.run_sync("2+3?").output)
blocked = set(sys.argv[1].split(","))
print("heavy:", sorted(m for m in sys.modules if m.partition(".")[0] in blocked))
"""


def test_the_library_runs_an_agent_with_no_extra_installed() -> None:
    done = without(ALL_EXTRAS, sys.executable, "-c", LIBRARY_ONLY, ALL_EXTRAS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["2 + 3 = 5", "heavy: []"]


def test_the_cli_runs_and_lists_stored_runs_with_no_extra_installed(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    ran = without(ALL_EXTRAS, PONDER, "run", "--model", "scripted", "--store", store, "hello")
    assert ran.returncode == 0, ran.stderr
    listed = without(ALL_EXTRAS, PONDER, "runs", "list", "--store", store)
    assert listed.returncode == 0, listed.stderr
    assert "completed" in listed.stdout


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("blocked", "command", "extra"),
    [
        ("fastapi", ("serve", "--model", "scripted", "--port", "0"), "server"),
        ("sse_starlette", ("serve", "--model", "scripted", "--port", "0"), "server"),
        ("anthropic", ("run", "--model", "anthropic:claude-3-5-haiku-latest", "hi"), "anthropic"),
        ("psycopg", ("runs", "list", "--store", "postgresql://127.0.0.1/test"), "postgres"),
        ("mcp", ("mcp", "thinking"), "mcp"),
        ("temporalio", ("runs", "show", "x", "--temporal", "127.0.0.1:1"), "temporal"),
    ],
)
def test_a_command_needing_a_missing_extra_names_it(
    blocked: str, command: tuple[str, ...], extra: str
) -> None:
    done = without(blocked, PONDER, *command)
    assert done.returncode == 2, done.stderr
    line = one_line(done)
    assert f"pip install 'ponder[{extra}]'" in line
    assert f"{blocked} is not installed" in line


API_NEEDS = {
    "anthropic": "from ponder import Agent\nAgent('anthropic:claude-3-5-haiku-latest').model",
    "psycopg": "from ponder.store import open_store\nopen_store('postgresql://127.0.0.1/test')",
    "mcp": (
        "from ponder import Agent, AgentConfig\n"
        "Agent('scripted', config=AgentConfig(agent_mcp_client_enable=True,"
        " agent_mcp_server_scripts=['stdio://[\"true\"]']))"
    ),
    "temporalio": "import ponder.temporal",
    "fastapi": "import ponder.server.app",
}
EXTRA_OF = {"psycopg": "postgres", "temporalio": "temporal", "fastapi": "server"}


@pytest.mark.parametrize("blocked", sorted(API_NEEDS))
def test_the_python_api_raises_a_user_error_naming_the_extra(blocked: str) -> None:
    code = (
        "from ponder.exceptions import UserError\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in API_NEEDS[blocked].splitlines())
        + "except UserError as error:\n    print(error)\n"
    )
    done = python(blocked, code)
    assert done.returncode == 0, done.stderr
    extra = EXTRA_OF.get(blocked, blocked)
    assert done.stdout.strip().endswith(f"pip install 'ponder[{extra}]'"), done.stdout
