"""Ledger messages, run states and usage share one fields set per set of field names.

The swap must change nothing a user can see: the names, copies with updates, deep copies,
pickling, ``exclude_unset`` dumps and equality behave as with pydantic's own sets.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.agent import Agent
from ponder.agent.run.plan_state import ContextTracking, StepRunState
from ponder.agent.run.state import RunState
from ponder.messages import AssistantMessage, Ledger, ToolCallPart, ToolMessage, UserMessage
from ponder.models import ScriptedModel, reply
from ponder.models.base import ModelResponse, Usage
from ponder.shared_fields import SharedFieldsSet
from ponder.tools import ToolRegistry, tool
from ponder.tools.decorator import to_tool_result
from ponder.tools.executor import ToolExecutor
from ponder.tools.tool import ToolResult

from .agent.scripts import stop


def _ledger() -> Ledger:
    ledger = Ledger()
    for n in range(2):
        call = ToolCallPart.from_args(f"c{n}", "add", {"a": n, "b": 1})
        ledger.append(UserMessage(content=f"go {n}"))
        ledger.append(AssistantMessage(parts=(call,)))
        ledger.append(ToolMessage(call_id=f"c{n}", name="add", content=str(n + 1)))
    return ledger


def test_messages_of_the_same_shape_share_one_immutable_set() -> None:
    messages = list(_ledger())
    users = [m for m in messages if isinstance(m, UserMessage)]
    assert users[0].__pydantic_fields_set__ is users[1].__pydantic_fields_set__
    assert type(users[0].model_fields_set) is SharedFieldsSet
    assert users[0].model_fields_set == {"content"}
    parts = [m.parts[0] for m in messages if isinstance(m, AssistantMessage)]
    assert parts[0].__pydantic_fields_set__ is parts[1].__pydantic_fields_set__
    assert parts[0].model_fields_set == {"id", "name", "arguments", "args"}


def test_copies_dumps_and_pickles_behave_as_before() -> None:
    fresh = ToolMessage(call_id="c0", name="add", content="1")
    shared = next(m for m in _ledger() if isinstance(m, ToolMessage))
    assert shared == fresh
    assert shared.model_dump(exclude_unset=True) == fresh.model_dump(exclude_unset=True)
    updated = shared.model_copy(update={"content": "3", "is_error": True})
    assert updated.content == "3" and updated.model_fields_set == {
        "call_id",
        "name",
        "content",
        "is_error",
    }
    assert shared.model_fields_set == {"call_id", "name", "content"}  # the original is intact
    deep = copy.deepcopy(shared)
    assert deep == shared and type(deep.model_fields_set) is set
    with pytest.raises(TypeError, match="read-only"):
        shared.model_fields_set.add("data")
    assert pickle.loads(pickle.dumps(shared)) == shared


async def test_a_runs_state_and_messages_use_shared_sets() -> None:
    agent = Agent(ScriptedModel([stop("hi"), reply("hi")]), enable_thinking_tool=False)
    result = await agent.run("hello")
    assert result.output == "hi"
    assert all(type(m.model_fields_set) is SharedFieldsSet for m in result.messages)
    state = RunState(run_id="r", prompt="p")
    assert type(state.model_fields_set) is SharedFieldsSet
    state.rounds = 3  # assignments bypass the set
    assert state.model_fields_set == {"run_id", "prompt"}
    restored = RunState.model_validate(state.model_dump(mode="json"))
    assert restored.rounds == 3 and restored.prompt == "p"
    assert (
        RunState(run_id="q").__pydantic_fields_set__ is RunState(run_id="s").__pydantic_fields_set__
    )


def test_usage_shares_its_set_until_it_is_assigned_to() -> None:
    total = Usage(requests=1, input_tokens=2) + Usage(requests=1, output_tokens=3)
    other = Usage(requests=4) + Usage()
    assert total.__pydantic_fields_set__ is other.__pydantic_fields_set__
    assert type(total.model_fields_set) is SharedFieldsSet
    total.requests = 7  # pydantic's own assignment, into a set of the instance's own
    assert total.requests == 7 and type(total.model_fields_set) is set
    assert other.model_fields_set == total.model_fields_set
    assert type(other.model_fields_set) is SharedFieldsSet  # the shared one is unchanged
    assert Usage().model_dump(exclude_unset=True) == {}
    summed = Usage(requests=1, input_tokens=2) + Usage(output_tokens=3, reasoning_tokens=4)
    assert summed == Usage(requests=1, input_tokens=2, output_tokens=3, reasoning_tokens=4)
    assert pickle.loads(pickle.dumps(summed)) == summed == copy.deepcopy(summed)
    assert Usage.model_validate_json(summed.model_dump_json()) == summed


def test_step_state_assignments_and_dumps_behave_as_before() -> None:
    step = StepRunState()
    assert type(step.model_fields_set) is SharedFieldsSet
    step.iterations = 2
    step.round_calls = (ToolCallPart.from_args("c0", "add", {"a": 1, "b": 2}),)
    assert step.model_fields_set == {"iterations", "round_calls"}
    dumped = step.model_dump(mode="json", exclude_unset=True)
    assert set(dumped) == {"iterations", "round_calls"}
    assert StepRunState.model_validate(dumped) == step
    assert type(ContextTracking().model_fields_set) is SharedFieldsSet


def _alike(fast: BaseModel, validated: BaseModel) -> None:
    """A model built around pydantic is what validation builds, field for field."""
    assert type(fast) is type(validated)
    assert fast == validated
    assert list(fast.__dict__) == list(validated.__dict__)
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.model_dump(mode="json") == validated.model_dump(mode="json")
    assert fast.model_dump_json(exclude_unset=True) == validated.model_dump_json(exclude_unset=True)
    assert pickle.loads(pickle.dumps(fast)) == validated


@pytest.mark.parametrize("value", ["text", 7, True, None, {"a": [1, 2.5]}, [1, "x"], 2.5])
def test_results_built_without_validation_equal_validated_ones(value: Any) -> None:
    result = to_tool_result(value)
    data = None if isinstance(value, str) or value is None else value
    output = value if isinstance(value, str) else "(no output)" if value is None else None
    _alike(result, ToolResult.ok(result.output if output is None else output, data=data))
    assert result.output == (output if output is not None else json.dumps(value))
    result.output = "assigned"  # a result is mutable: its fields set is its own
    assert "output" in result.model_fields_set


async def test_messages_built_from_a_response_and_a_result_equal_validated_ones() -> None:
    call = ToolCallPart.from_args("c1", "add", {"a": 1, "b": 2})
    extras = {"id": "resp-1"}
    response = ModelResponse(parts=(call,), model_name="m", provider_extras=extras)
    message = response.to_message()
    _alike(message, AssistantMessage(parts=(call,), model_name="m", provider_extras=extras))
    assert message.provider_extras is not response.provider_extras  # a copy, as validation makes

    executor = ToolExecutor(ToolRegistry([tool(name="add", run_in_thread=False)(_add)]))
    outcome = await executor.run_call(call, run_id="r")
    _alike(
        outcome.message,
        ToolMessage(call_id="c1", name="add", content="3", data=3, is_error=False, attachments=()),
    )


def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
