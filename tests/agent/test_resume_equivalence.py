"""A run suspended mid-reflection and restored behaves exactly like an uninterrupted one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ponder.agent import Agent
from ponder.agent.hooks import ModelCall
from ponder.events import Event
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import MemoryStore, SQLiteStore, Store
from ponder.tools import tool

from .scripts import stop

SKIPPED = {"checkpoint_written", "run_suspended", "run_resumed"}


def measure(x: int) -> str:
    """Measure something."""
    return f"measured {x}"


def deploy(target: str) -> str:
    """Deploy to a target."""
    return f"deployed {target}"


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            call_tools(("measure", {"x": 1})),
            stop("measured"),
            # the reflection request: a failing verdict beside a call that needs approval
            call_tools(
                ("verify_reasoning", {"check_type": "self_check", "result": "fail", "detail": "x"}),
                ("deploy", {"target": "prod"}),
            ),
            stop("measured and deployed"),
            reply("measured 1, deployed prod"),
        ]
    )


def agent(model: ScriptedModel, *, approval: bool, store: Store) -> Agent:
    tools = [tool(measure), tool(requires_approval=approval)(deploy)]
    made = Agent(
        model,
        tools=tools,
        store=store,
        agent_thought_mode="chat",
        enable_reflection=True,
        reflection_depth=1,
    )

    @made.hooks.on_precompletion()
    def offer_deploy(call: ModelCall) -> None:
        # the script calls deploy beside its verdicts: offer it, or it would be refused unrun
        if call.purpose == "reflection":
            call.tools = [*call.tools, tools[1].definition]

    return made


def shape(events: list[Event]) -> list[tuple[str, Any]]:
    """Each event's kind and payload, without the stamps, timings and durability events."""
    return [
        (
            e.kind,
            {k: v for k, v in vars_of(e).items() if k not in ("run_id", "seq", "time", "latency")},
        )
        for e in events
        if e.kind not in SKIPPED
    ]


def vars_of(event: Event) -> dict[str, Any]:
    fields = event.__dataclass_fields__
    return {name: getattr(event, name) for name in fields if name != "duration"}


async def test_a_run_restored_mid_reflection_matches_the_uninterrupted_run() -> None:
    plain_model, plain_events = script(), list[Event]()
    plain = agent(plain_model, approval=False, store=MemoryStore())
    plain.hooks.on_event()(plain_events.append)
    uninterrupted = await plain.run("measure and deploy")
    assert uninterrupted.status == "completed"

    held_model, held_events = script(), list[Event]()
    held = agent(held_model, approval=True, store=MemoryStore())
    held.hooks.on_event()(held_events.append)
    suspended = await held.run("measure and deploy")
    assert suspended.status == "suspended"
    assert suspended.suspension is not None
    assert [c["name"] for c in suspended.suspension["payload"]["calls"]] == ["deploy"]
    assert "reflection" in [e.kind for e in held_events]
    restored = await held.resume(suspended.run_id, "approve")

    assert restored.status == "completed"
    assert restored.output == uninterrupted.output == "measured 1, deployed prod"
    assert restored.messages == uninterrupted.messages
    assert [r.tool_choice for r in held_model.requests] == [
        r.tool_choice for r in plain_model.requests
    ]
    assert shape(held_events) == shape(plain_events)
    assert [e.kind for e in held_events].count("reflection") == 1


async def test_a_checkpoint_with_the_old_extra_bag_resumes(tmp_path: Path) -> None:
    plain = agent(script(), approval=False, store=MemoryStore())
    uninterrupted = await plain.run("measure and deploy")

    path = tmp_path / "runs.sqlite3"
    held = agent(script(), approval=True, store=SQLiteStore(path))
    suspended = await held.run("measure and deploy", run_id="old")
    assert suspended.status == "suspended"
    with sqlite3.connect(path) as db:  # write the header as ponder wrote it before
        (text,) = db.execute("SELECT header FROM ponder_runs WHERE run_id = 'old'").fetchone()
        header = json.loads(text)
        state = header["vm"]["state"]
        state["extra"] = {k: state.pop(k) for k in ("awaiting_approval", "phase") if k in state}
        assert state["extra"]["awaiting_approval"]
        db.execute("UPDATE ponder_runs SET header = ? WHERE run_id = 'old'", (json.dumps(header),))
    restored = await held.resume("old", "approve")
    assert restored.status == "completed"
    assert restored.messages == uninterrupted.messages
