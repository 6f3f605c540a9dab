"""Asking the model for structured output with bounded retries and a correction each time.

Used by decomposition, step summaries, replanning and the report guard. Malformed JSON,
a structure that does not validate, or a value the caller's check rejects is shown to the
model with a correction; after ``structured_output_retries`` retries the caller gets
``None`` and falls back. The retry messages are not written to the run's ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ponder.agent.strategies.prompts import structured_correction
from ponder.exceptions import StructuredOutputError
from ponder.messages import AssistantMessage, Message, TextPart, UserMessage
from ponder.models.structured import output_schema, parse_structured

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["request_structured"]

T = TypeVar("T", bound=BaseModel)


async def request_structured(
    ctx: RunContext,
    purpose: str,
    messages: Sequence[Message],
    schema: dict[str, Any],
    output_type: type[T],
    check: Callable[[T], list[str]] | None = None,
) -> T | None:
    """The model's answer as ``output_type``, or ``None`` once the retries are used up."""
    sent = list(messages)
    spec = output_schema(schema)
    for _ in range(ctx.config.structured_output_retries + 1):
        response = await ctx.caller.request(purpose, (), "none", output=spec, messages=sent)
        try:
            value = parse_structured(response, output_type)
        except StructuredOutputError as error:
            problem = str(error)
        else:
            problems = check(value) if check is not None else []
            if not problems:
                return value
            problem = "; ".join(problems)
        answer = AssistantMessage(parts=(TextPart(text=response.text or "(empty)"),))
        sent += [answer, UserMessage(content=structured_correction(problem))]
    return None
