"""Step positions after a replan, and the replan as its own event, on the wire."""

from __future__ import annotations

import json
from typing import Any

from ponder.agent import Agent
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def structured(data: dict[str, Any]) -> FakeReply:
    return FakeReply(content=json.dumps(data))


def plan(*ids: str) -> FakeReply:
    steps = [{"id": i, "description": i.title(), "depends_on": []} for i in ids]
    return structured({"needs_decomposition": True, "reason": "parts", "steps": steps})


def summary(text: str) -> FakeReply:
    return structured({"summary": text, "outputs": []})


def call(name: str, **args: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=args)])


STOP = call("agent_stop")
DAG = [
    {"id": "outline", "description": "Outline", "depends_on": []},
    {"id": "write", "description": "Write", "depends_on": ["outline"]},
]


async def run(script: list[FakeReply | str], **config: Any) -> list[Any]:
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:fake",
            tools=[lookup],
            base_url=server.base_url,
            api_key="k",
            agent_workflow="step-react",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            **config,
        )
        events = [e async for e in agent.stream("write something")]
        await agent.model.aclose()  # type: ignore[attr-defined]
    return events


async def test_after_an_update_step_replan_steps_count_in_the_new_plan() -> None:
    events = await run(
        [
            plan("gather", "draft"),
            STOP,
            summary("Gathered."),
            call("update_step", action="replan", dag=DAG),
            STOP,
            summary("Outlined."),
            STOP,
            summary("Written."),
            "final text",
        ]
    )
    started = [(e.step_id, e.index, e.total) for e in of_kind(events, "step_started")]
    assert started == [("gather", 1, 2), ("draft", 2, 2), ("outline", 2, 3), ("write", 3, 3)]
    assert all(index <= total for _, index, total in started)
    [replan] = of_kind(events, "plan_replanned")
    assert (replan.trigger, replan.replaced, replan.revision) == ("update_step", ["draft"], 2)
    assert [s["id"] for s in replan.steps] == ["gather", "outline", "write"]
    kinds = [e.kind for e in events]
    assert kinds.index("plan_replanned") + 1 == kinds.index(
        "plan_updated", kinds.index("plan_replanned")
    )
    assert of_kind(events, "run_finished")[0].output == "final text"


async def test_a_stall_replan_is_its_own_event_with_positions_in_the_new_plan() -> None:
    same = call("lookup", key="x")
    events = await run(
        [
            plan("only"),
            same,
            same,
            same,  # the stall: three identical calls
            structured({"needs_decomposition": True, "reason": "another way", "steps": DAG}),
            STOP,
            summary("Outlined."),
            STOP,
            summary("Written."),
            "done",
        ],
        loop_reasoning_trigger=2,
    )
    [stall] = [e for e in of_kind(events, "stall_detected") if e.action == "replan"]
    [replan] = of_kind(events, "plan_replanned")
    assert (replan.trigger, replan.replaced) == ("stall", ["only"])
    started = [(e.step_id, e.index, e.total) for e in of_kind(events, "step_started")]
    assert started == [("only", 1, 1), ("outline", 2, 3), ("write", 3, 3)]
    assert stall.step_id == "only"
