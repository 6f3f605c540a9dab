"""A stream stopped before its first event keeps the kind of stop it was given."""

from __future__ import annotations

import asyncio

import pytest

from ponder import Agent
from ponder.models import ModelResponse, ScriptedModel, call_tools


async def test_an_interrupt_before_iteration_stops_the_run_as_it_starts() -> None:
    model = ScriptedModel(["never asked"])
    stream = Agent(model, agent_thought_mode="chat").stream("Hello")
    stream.interrupt()
    with pytest.raises(asyncio.CancelledError):
        async for _ in stream:
            pass
    assert model.requests == []  # the run was stopped before it asked the model anything


async def test_a_stream_never_stopped_runs_as_usual() -> None:
    script: list[ModelResponse | str] = [call_tools(("agent_stop", {"result": "Hi."})), "Hi."]
    stream = Agent(ScriptedModel(script), agent_thought_mode="chat").stream("Hello")
    kinds = [event.kind async for event in stream]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert stream.result.output == "Hi."
