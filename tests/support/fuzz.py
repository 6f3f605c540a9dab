"""Malformed provider responses sent to real agent runs, tallied (the test and the bench).

Each case is one run with a SQLite store: its first model request is answered by a
malformed response from `ponder.testing.malformed`, later ones by valid replies (an
``agent_stop`` call, then the answer). The cases are spread over the OpenAI and the
Anthropic fakes, streamed and not. A run must complete or end with a ponder error, and never
stay ``running``, keep its lease, or hang.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ponder import Agent
from ponder.exceptions import PonderError
from ponder.models import OpenAIModel, RetryPolicy
from ponder.models.anthropic import AnthropicModel
from ponder.models.capabilities import forget_learned
from ponder.store import SQLiteStore, Store
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.testing.malformed import Provider, malformed_replies
from ponder.tools import tool

__all__ = ["FuzzTally", "fuzz_runs"]

FAST = RetryPolicy(max_retries=1, backoff_base=0.001, backoff_cap=0.01)
LANES: tuple[tuple[Provider, bool], ...] = (
    ("openai", False),
    ("openai", True),
    ("anthropic", False),
    ("anthropic", True),
)
_CASE = re.compile(r"fuzz-case-(\d+)")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@dataclass
class FuzzTally:
    """What the runs of one lane (a provider, streamed or not) came to."""

    lane: str
    runs: int = 0
    completed: int = 0
    typed_errors: Counter[str] = field(default_factory=Counter)
    untyped: list[str] = field(default_factory=list)
    left_running: list[str] = field(default_factory=list)
    hung: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        """Every run that broke a goal."""
        return self.untyped + self.left_running + self.hung


def _script(cases: list[Any]) -> Any:
    def answer(body: dict[str, Any]) -> FakeReply:
        history = json.dumps(body.get("messages", []))
        found = _CASE.search(history)
        said = [m for m in body.get("messages", []) if m.get("role") == "assistant"]
        if not said and found is not None:
            return FakeReply(raw=cases[int(found.group(1))][1])
        if '"agent_stop"' in history:
            return FakeReply(content="done")
        stop = FakeToolCall(name="agent_stop", arguments={"result": "done"})
        return FakeReply(tool_calls=[stop])

    return answer


def _agent(provider: Provider, server: FakeOpenAIServer, store: Store) -> Agent:
    model: OpenAIModel | AnthropicModel
    if provider == "openai":
        model = OpenAIModel("m", api_key="k", base_url=server.base_url, retry=FAST)
    else:
        model = AnthropicModel("c", api_key="k", base_url=server.base_url, retry=FAST)
    return Agent(
        model, tools=[add], agent_thought_mode="chat", enable_thinking_tool=False, store=store
    )


async def _one(agent: Agent, streamed: bool, prompt: str, run_id: str) -> None:
    if streamed:
        async for _ in agent.stream(prompt, run_id=run_id):
            pass
    else:
        await agent.run(prompt, run_id=run_id)


async def _case(
    agent: Agent, lane: str, streamed: bool, number: int, name: str, store: Store, tally: FuzzTally
) -> None:
    run_id, label = f"fuzz-{lane}-{number}", f"{lane} {number} ({name})"
    tally.runs += 1
    forget_learned()  # each case meets the provider fresh
    try:
        async with asyncio.timeout(60):
            await _one(agent, streamed, f"fuzz-case-{number}: add 1 and 2", run_id)
        tally.completed += 1
    except TimeoutError:
        tally.hung.append(label)
    except PonderError as exc:
        tally.typed_errors[type(exc).__name__] += 1
    except Exception as exc:
        tally.untyped.append(f"{label}: {type(exc).__name__}: {exc}")
    record = next((r for r in await store.list_runs(limit=5) if r.run_id == run_id), None)
    if record is not None and (record.status == "running" or record.lease_owner is not None):
        tally.left_running.append(f"{label}: {record.status}, lease {record.lease_owner}")


async def _lane(
    provider: Provider, streamed: bool, seed: int, count: int, store: Store
) -> FuzzTally:
    tally = FuzzTally(f"{provider}, {'streamed' if streamed else 'whole'}")
    cases = list(malformed_replies(seed, count, provider, streamed))
    kind = FakeOpenAIServer if provider == "openai" else FakeAnthropicServer
    async with kind(_script(cases)) as server:
        agent = _agent(provider, server, store)
        lane = f"{provider}-{'stream' if streamed else 'whole'}"
        for number, (name, _) in enumerate(cases):
            await _case(agent, lane, streamed, number, name, store, tally)
    return tally


async def fuzz_runs(seed: int, count: int, folder: Path) -> list[FuzzTally]:
    """``count`` runs, each meeting one malformed response, spread over the four lanes."""
    tallies = []
    store = SQLiteStore(folder / "fuzz.sqlite3")
    try:
        for lane, (provider, streamed) in enumerate(LANES):
            share = count // len(LANES) + (1 if lane < count % len(LANES) else 0)
            tallies.append(await _lane(provider, streamed, seed + lane, share, store))
    finally:
        await store.close()
        forget_learned()
    return tallies
