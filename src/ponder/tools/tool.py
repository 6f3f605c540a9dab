"""The core tool types: `Tool`, `ToolResult` and the `ToolContext` a call receives.

A `Tool` is a name, a description, a JSON Schema for its arguments and an async function
that takes the call's context and its *validated* arguments and returns a `ToolResult`.
`ToolResult.output` is what the model sees; `ToolResult.data` is what a UI shows.
Stateful tools name a pydantic ``state_type``: each run gets one fresh instance, kept in the
run's state so checkpoints save and restore it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ponder.media import File, Image
from ponder.messages import ToolCallPart, ToolMessage
from ponder.tools.definition import ToolDefinition

__all__ = ["Tool", "ToolContext", "ToolFunction", "ToolResult", "ToolValidator"]


class ToolResult(BaseModel):
    """The outcome of one tool call: ``output`` for the model, ``data`` for a UI."""

    success: bool = True
    output: str = ""
    data: Any = None
    error: str | None = None
    attachments: tuple[Image | File, ...] = ()
    """Images (or files) for the model besides ``output``: a tool returning an `Image`."""
    display: Literal["thinking", "plan"] | None = None
    """The event a successful result makes besides ``tool_call_finished``: ``thinking``
    (``sequential_thinking``'s record) or ``plan`` (``todo_write``'s ``todo``); ``data`` is
    that event's payload."""

    @classmethod
    def ok(
        cls, output: str, data: Any = None, *, display: Literal["thinking", "plan"] | None = None
    ) -> ToolResult:
        """A successful result (``display``: the event it makes, see `display`)."""
        if display is None:  # the fields set stays the one a plain result has
            return cls(success=True, output=output, data=data)
        return cls(success=True, output=output, data=data, display=display)

    @classmethod
    def fail(cls, error: str, *, output: str | None = None, data: Any = None) -> ToolResult:
        """A failed result; the model sees ``Error: <error>`` unless ``output`` is given."""
        return cls(
            success=False,
            output=f"Error: {error}" if output is None else output,
            data=data,
            error=error,
        )

    def to_message(self, call: ToolCallPart) -> ToolMessage:
        """The ledger message answering ``call``."""
        return ToolMessage(
            call_id=call.id,
            name=call.name,
            content=self.output,
            data=self.data,
            is_error=not self.success,
            attachments=self.attachments,
        )


@dataclass(slots=True)
class ToolContext:
    """What a tool function receives besides its arguments."""

    run_id: str
    call_id: str
    tool_name: str
    state: Any = None
    """This run's state object for a stateful tool (an instance of ``Tool.state_type``)."""
    deps: Any = None
    """Whatever the caller passed as ``deps`` to the run."""
    lock: asyncio.Lock | None = None
    """Held by the executor around calls of a stateful tool within one run."""
    worker: asyncio.Future[Any] | None = None
    """A sync tool's thread, as a future: the executor holds the slot until it is done."""
    run: Any = None
    """The agent run that made the call (its run context), for a tool that starts
    sub-agents under it; None outside an agent's run."""


ToolFunction = Callable[[ToolContext, dict[str, Any]], Awaitable[ToolResult]]
ToolValidator = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model can call."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: ToolFunction
    validator: ToolValidator | None = None
    """Turns raw arguments into validated ones or raises ``ArgumentError``; None = as is."""
    timeout: float | None = None
    """Seconds before a call is abandoned with an error result; None = executor default."""
    max_concurrency: int | None = None
    requires_approval: bool = False
    idempotent: bool = False
    """Safe to run again if a crash interrupted it before its result was saved."""
    state_type: type[BaseModel] | None = None
    builtin: bool = False
    strict: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def definition(self) -> ToolDefinition:
        """What the model is told about this tool."""
        return ToolDefinition(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            strict=self.strict,
        )

    def new_state(self) -> BaseModel | None:
        """A fresh per-run state for a stateful tool, else None."""
        return None if self.state_type is None else self.state_type()
