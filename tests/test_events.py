"""The event union: names agree with kinds, every kind round-trips, bad input is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from ponder import Agent, AgentConfig, tool
from ponder.events import (
    EVENT_KINDS,
    EVENT_TYPES,
    Event,
    EventKind,
    Usage,
    UsageUpdated,
    event_from_dict,
    event_to_dict,
    kind_of,
)
from ponder.models import ScriptedModel, call_tools, reply

RECORDED = Path(__file__).parent / "cli" / "demo_events.json"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_every_class_is_named_after_its_kind() -> None:
    assert len(EVENT_TYPES) == len(EVENT_KINDS) >= 30
    for kind, cls in EVENT_TYPES.items():
        assert _snake(cls.__name__) == kind
    assert EVENT_KINDS == set(get_args(EventKind))
    assert UsageUpdated is Usage


def test_recorded_events_round_trip_through_json() -> None:
    recorded = json.loads(RECORDED.read_text("utf-8"))
    for item in recorded:
        event = event_from_dict(item)
        assert type(event) is EVENT_TYPES[item["kind"]]
        assert json.loads(json.dumps(event_to_dict(event))) == item


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_every_event_of_a_real_run_round_trips() -> None:
    think = ("think_and_reason", {"last_step": "", "summary": "[Step 1/1] [plan] add"})
    model = ScriptedModel(
        [
            call_tools(think),
            call_tools(("add", {"a": 1, "b": 2}), ("processing_message", {"content": "adding"})),
            call_tools(think),
            call_tools(("agent_stop", {"result": "3"})),
            call_tools(
                *(
                    ("verify_reasoning", {"check_type": check, "result": "pass"})
                    for check in ("self_check", "contradiction_check", "completeness_check")
                )
            ),
            reply("3"),
        ]
    )
    config = AgentConfig(enable_reflection=True, structured_reasoning=True)
    agent = Agent(model, tools=[add], config=config, agent_middle_message=True)
    events: list[Event] = [event async for event in agent.stream("add")]
    expected = {"run_started", "reasoning", "structured_reasoning", "middle_message", "usage"}
    assert {e.kind for e in events} >= {*expected, "reflection", "tool_call_finished"}
    for event in events:
        data = json.loads(json.dumps(event_to_dict(event)))
        assert event_from_dict(data) == event


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "no_such_event"}, "unknown event kind 'no_such_event'"),
        ({"text": "hello"}, "unknown event kind None"),
        ({"kind": "usage", "requests": "many", "input_tokens": 1, "output_tokens": 1}, "requests"),
        ({"kind": "loop_detected", "signature": "s", "repeats": 2, "action": "x"}, "action"),
        ({"kind": "text_delta"}, "text"),
    ],
)
def test_malformed_events_are_refused_with_the_field_named(
    data: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        event_from_dict(data)


def test_kind_of_names_the_unknown_kind() -> None:
    assert kind_of({"kind": "usage"}) == "usage"
    with pytest.raises(ValueError, match="unknown event kind 3"):
        kind_of({"kind": 3})


def test_the_older_event_names_resolve_with_a_deprecation_warning() -> None:
    import ponder.events as events

    for old, cls in events.DEPRECATED_NAMES.items():
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use .*{cls.__name__}"):
            assert getattr(events, old) is cls
    with pytest.raises(AttributeError):
        events.NoSuchEvent  # noqa: B018
