"""Recording a run into a cassette: `Recorder`, the tap ``Agent(record=...)`` attaches.

The recorder wraps the run's model (every request and its response, or its error),
records every tool call that is not ponder's own with the executor's result, and the VM
node path; when the run ends, however it ends, it writes the cassette.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ponder.events import Event, RunStarted
from ponder.messages import Message, ToolCallPart, messages_to_json
from ponder.models.base import Model, ModelRequest, ModelResponse, StreamEvent
from ponder.observability.tap import RunTap
from ponder.replay.cassette import (
    SECRET_KEYS,
    Cassette,
    Exchange,
    NodeVisit,
    RecordedError,
    ToolRecord,
    request_to_json,
    save_cassette,
)
from ponder.tools.executor import ToolRun, ToolStatus
from ponder.tools.tool import Tool, ToolResult

if TYPE_CHECKING:
    from ponder.observability.tap import TappedRun
    from ponder.vm import Interpreter

__all__ = ["Recorder", "RecordingModel"]


def recorded_error(error: BaseException) -> RecordedError:
    """An exception as a cassette keeps it."""
    return RecordedError(type=type(error).__name__, message=str(error))


class RecordingModel:
    """A model that forwards to another and writes each exchange to a recorder."""

    def __init__(self, model: Model, recorder: Recorder) -> None:
        self.inner = model
        self.recorder = recorder

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` to the wrapped model and record the exchange."""
        exchange = self.recorder.exchange(request)
        try:
            response = await self.inner.request(request)
        except Exception as error:
            exchange.error = recorded_error(error)
            raise
        exchange.response = response
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream from the wrapped model; the final response is recorded."""
        exchange = self.recorder.exchange(request)
        try:
            async for item in self.inner.stream(request):
                if isinstance(item, ModelResponse):
                    exchange.response = item
                yield item
        except Exception as error:
            exchange.error = recorded_error(error)
            raise


class Recorder(RunTap):
    """Records one run; writes the cassette to ``path`` when the run ends."""

    def __init__(self, path: str | os.PathLike[str], *, tools_spec: str | None = None) -> None:
        self.path = path
        self.cassette = Cassette(tools_spec=tools_spec)
        self._ctx: TappedRun | None = None
        self._sent: tuple[Message, ...] = ()

    def wrap_model(self, model: Model) -> Model:
        """Record each exchange of the run's model."""
        return RecordingModel(model, self)

    def attach(self, ctx: TappedRun) -> None:
        """Keep the run, to name each exchange's purpose."""
        self._ctx = ctx

    def exchange(self, request: ModelRequest) -> Exchange:
        """A new exchange for ``request``, appended to the cassette."""
        purpose = self._ctx.purpose if self._ctx is not None else ""
        messages, sent, prefix = tuple(request.messages), self._sent, 0
        while prefix < min(len(messages), len(sent)) and (
            messages[prefix] is sent[prefix] or messages[prefix] == sent[prefix]
        ):
            prefix += 1
        self._sent = messages
        exchange = Exchange(
            purpose=purpose, prefix=prefix, request=request_to_json(request, skip=prefix)
        )
        self.cassette.exchanges.append(exchange)
        return exchange

    def event(self, event: Event) -> None:
        """Note what the run was given when it starts."""
        if isinstance(event, RunStarted) and self._ctx is not None:
            ctx, cassette = self._ctx, self.cassette
            cassette.run_id, cassette.prompt = ctx.state.run_id, ctx.state.prompt
            cassette.model, cassette.workflow = event.model, event.workflow
            cassette.history = messages_to_json(ctx.state.ledger.messages)

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, run: ToolRun
    ) -> tuple[ToolResult, ToolStatus]:
        """Run the call and record its result (ponder's own tools are not)."""
        result, status = await run()
        if tool is None or not tool.builtin:
            arguments = call.args if call.args is not None else call.arguments
            record = ToolRecord(
                call_id=call.id, name=call.name, arguments=arguments, result=result, status=status
            )
            self.cassette.tool_calls.append(record)
        return result, status

    def node(self, vm: Interpreter, pc: int) -> None:
        """Record the node in the path."""
        found = vm.program.node_at(pc)
        self.cassette.trace.append(NodeVisit(pc=pc, node=None if found is None else found.name))

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """Write the cassette."""
        cassette, state = self.cassette, ctx.state
        config = ctx.config.model_dump(mode="json")
        cassette.config = {k: v for k, v in config.items() if k not in SECRET_KEYS}
        cassette.instructions = ctx.instructions
        cassette.tools = [t.definition for t in ctx.tools if not t.builtin]
        cassette.status, cassette.output = state.status, state.output or ""
        cassette.stop_reason = state.stop_reason or ""
        cassette.error = None if error is None else recorded_error(error)
        save_cassette(cassette, self.path)
