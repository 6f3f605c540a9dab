"""The run's typed answer: validating the final answer into the run's output type.

After the strategy has its answer, a run with an output type (`RunContext.output`) keeps
it if the answer already is valid JSON of that type (the final-answer request asks for
the structure whenever tools are off). Otherwise the model is asked for the structure —
by the provider's JSON-schema ``response_format`` or a forced output tool, as its
capabilities allow — and an answer that does not validate is sent back with what is wrong,
up to ``structured_output_retries`` times. Then the run stops with ``invalid_output``.
Every request and correction goes into the ledger, so a resumed run goes on from them.
"""

from __future__ import annotations

import json
from typing import Any

from ponder.agent.run.context import RunContext
from ponder.agent.strategies import prompts
from ponder.agent.strategies.fitting import request_in_window
from ponder.events import OutputRejected
from ponder.status import StopReason

__all__ = ["NO_ANSWER_STOPS", "settle_output"]

NO_ANSWER_STOPS: frozenset[StopReason] = frozenset({"reported", "content_filter"})
"""Stop reasons after which no structured answer is asked for."""


async def settle_output(ctx: RunContext) -> None:
    """Validate the answer into the run's output type, asking again while retries last."""
    spec, state = ctx.output, ctx.state
    if spec is None or state.structured is not None or state.output_error is not None:
        return
    if state.stop_reason in NO_ANSWER_STOPS:
        state.output_error = f"the run stopped ({state.stop_reason}) before a typed answer"
        return
    text = state.output or ""
    read = spec.read(text)
    if read.problem is None:
        _accept(ctx, read.value)
        return
    problem = read.problem if text.strip() else "it was empty"
    retries = ctx.config.structured_output_retries
    instruction = prompts.output_instruction(spec.schema.name)
    if text.lstrip().startswith(("{", "[")):  # a structured answer that did not validate
        instruction = prompts.structured_correction(problem)
    while state.output_attempts <= retries:
        state.output_attempts += 1
        ctx.append_user(instruction)
        response = await request_in_window(ctx, "final_output", (), "none", output=spec.schema)
        state.ledger.append(response.to_message())
        text = response.text
        read = spec.read(text)
        if read.problem is None:
            _accept(ctx, read.value)
            return
        problem = read.problem
        attempt = state.output_attempts
        await ctx.bus.emit(
            OutputRejected(problem=problem, attempt=attempt, retrying=attempt <= retries)
        )
        instruction = prompts.structured_correction(problem)
    state.output, state.output_error = text, problem
    state.stop_reason = "invalid_output"


def _accept(ctx: RunContext, value: Any) -> None:
    state = ctx.state
    state.structured = value
    state.output = json.dumps(value, ensure_ascii=False)
