"""What importing, building and running an agent loads: only what each step needs.

Each check runs in a fresh interpreter and lists the modules it loaded; nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import ponder
import ponder.agent

HEAVY = (
    "httpx",
    "openai",
    "anthropic",
    "mcp",
    "fastapi",
    "starlette",
    "uvicorn",
    "sse_starlette",
    "psycopg",
    "tomlkit",
    "temporalio",
    "jinja2",
    "genai_prices",
    "rich",
    "opentelemetry",
    "sqlite3",
    "jsonschema",
)
"""Third-party and standard-library packages no plain agent needs."""

REPORT = """
import json, sys
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in set(sys.argv[1:])
                        or m.startswith("ponder") or m.startswith("pydantic."))))
"""

BUILD_AND_RUN = """
from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools
from ponder.tools import tool

@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

script = [call_tools(("add", {"a": 2, "b": 3})), call_tools(("agent_stop", {"result": "5"})), "5"]
agent = Agent(ScriptedModel(script), tools=[add], agent_thought_mode="chat")
assert agent.run_sync("2+3?").output == "5"
"""


def loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT, *HEAVY],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_importing_the_agent_loads_its_module_alone() -> None:
    modules = loaded("from ponder.agent import Agent")
    assert heavy_in(modules) == []
    assert "pydantic.main" not in modules  # no pydantic model is built on import
    runtime = (
        "ponder.config",
        "ponder.events",
        "ponder.messages",
        "ponder.tools",
        "ponder.vm",
        "ponder.agent.run",
    )
    assert sorted(m for m in modules if m.startswith(runtime)) == []


def test_from_ponder_import_agent_is_as_light() -> None:
    modules = loaded("from ponder import Agent")
    assert heavy_in(modules) == []
    assert "pydantic.main" not in modules


def test_a_run_without_a_store_loads_no_store_step_workflow_or_retrieval() -> None:
    modules = loaded(BUILD_AND_RUN)
    assert heavy_in(modules) == []
    unused = (
        "ponder.store.",
        "ponder.retrieval",
        "ponder.mcp",
        "ponder.agent.strategies.rag",
        "ponder.agent.strategies.step_react.strategy",
        "ponder.models.openai",
    )
    assert sorted(m for m in modules if m.startswith(unused) and m != "ponder.store.base") == []


def test_every_public_name_of_the_lazy_packages_resolves() -> None:
    for package in (ponder, ponder.agent):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
    assert set(dir(ponder.agent)) >= set(ponder.agent.__all__)
    assert ponder.agent.Agent is ponder.Agent
