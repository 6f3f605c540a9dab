"""Replaying a cassette offline: `ReplayModel` and the tap it gives each run.

``Agent(ReplayModel("run.json"), tools=...)`` runs the recorded task again without a
model: each request must equal the recorded one and gets the recorded response; tool
calls that are not ponder's own get their recorded results (unless ``live_tools``); each
VM node must be the one the recording ran next. The first difference raises
`ReplayDivergence` with a diff; a replay that ends before the cassette does, or with
another answer, raises it too.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ponder.exceptions import ModelError, ReplayDivergence
from ponder.messages import ReasoningPart, TextPart, ToolCallPart
from ponder.models.base import (
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
)
from ponder.observability.tap import RunTap
from ponder.replay.cassette import Cassette, Exchange, load_cassette, request_to_json
from ponder.replay.diff import diff_lines, path_lines, request_lines
from ponder.tools.executor import ToolRun, ToolStatus
from ponder.tools.tool import Tool, ToolResult

if TYPE_CHECKING:
    from ponder.observability.tap import TappedRun
    from ponder.vm import Interpreter

__all__ = ["ReplayModel", "ReplayTap"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class ReplayModel:
    """A model that answers from a cassette, checking each request against it.

    One replay model replays one run at a time; each run an agent starts with it
    rewinds it to the cassette's start.
    """

    def __init__(self, cassette: Cassette | str | os.PathLike[str], *, live_tools: bool = False):
        self.cassette = cassette if isinstance(cassette, Cassette) else load_cassette(cassette)
        self.live_tools = live_tools
        self.requests = 0
        """How many requests the current replay has made."""

    @property
    def name(self) -> str:
        """The recorded model's name."""
        return self.cassette.model or "replay"

    def run_tap(self) -> ReplayTap:
        """The tap that replays tool calls and checks the VM path of one run."""
        self.requests = 0
        return ReplayTap(self)

    def _next(self, request: ModelRequest) -> Exchange:
        exchanges, index = self.cassette.exchanges, self.requests
        asked = request_to_json(request)
        recorded = self.cassette.requests()
        if index >= len(exchanges):
            raise ReplayDivergence(
                "request",
                index,
                f"replay diverged at request {index + 1}: the cassette holds only "
                f"{len(exchanges)} requests",
                diff_lines([], request_lines(asked)),
            )
        exchange = exchanges[index]
        if _canonical(recorded[index]) != _canonical(asked):
            purpose = f" ({exchange.purpose})" if exchange.purpose else ""
            raise ReplayDivergence(
                "request",
                index,
                f"replay diverged at request {index + 1}{purpose}: it differs from the "
                "recorded one",
                diff_lines(request_lines(recorded[index]), request_lines(asked)),
            )
        self.requests = index + 1
        return exchange

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The recorded response to ``request`` (which must be the recorded request)."""
        exchange = self._next(request)
        if exchange.error is not None:
            raise ModelError(f"{exchange.error.type}: {exchange.error.message} (recorded)")
        if exchange.response is None:
            raise ReplayDivergence(
                "request",
                self.requests - 1,
                f"request {self.requests} has no recorded response (the recording stopped "
                "while it was in flight)",
            )
        return exchange.response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The recorded response, its text and reasoning streamed first."""
        response = await self.request(request)
        for part in response.parts:
            if isinstance(part, TextPart) and part.text:
                yield TextDelta(part.text)
            elif isinstance(part, ReasoningPart) and part.text:
                yield ReasoningDelta(part.text)
        yield response


class ReplayTap(RunTap):
    """Replays a run's tool results and checks its VM path against the cassette."""

    def __init__(self, model: ReplayModel) -> None:
        self.model = model
        self.cassette = model.cassette
        self.visits: list[tuple[int, str | None]] = []
        self.calls = {record.call_id: record for record in self.cassette.tool_calls}
        self.replayed_calls = 0

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, run: ToolRun
    ) -> tuple[ToolResult, ToolStatus]:
        """The recorded result (ponder's own tools, or all with live_tools, run)."""
        if self.model.live_tools or (tool is not None and tool.builtin):
            return await run()
        record = self.calls.get(call.id)
        arguments = call.args if call.args is not None else call.arguments
        if record is None or record.name != call.name or record.arguments != arguments:
            recorded = [] if record is None else [f"{record.name}({_canonical(record.arguments)})"]
            raise ReplayDivergence(
                "tool",
                self.model.requests,
                f"replay diverged at tool call {call.id!r}: the cassette has "
                + ("no such call" if record is None else "another call under that id"),
                diff_lines(recorded, [f"{call.name}({_canonical(arguments)})"]),
            )
        self.replayed_calls += 1
        return record.result, record.status

    def node(self, vm: Interpreter, pc: int) -> None:
        """Check the node against the recorded path."""
        found = vm.program.node_at(pc)
        visit = (pc, None if found is None else found.name)
        index = len(self.visits)
        self.visits.append(visit)
        trace = self.cassette.trace
        expected = (trace[index].pc, trace[index].node) if index < len(trace) else None
        if expected != visit:
            raise ReplayDivergence(
                "path",
                index,
                f"replay diverged at VM step {index + 1}: it runs {_where(visit)} where the "
                f"recording ran {_where(expected)}",
                self._path_diff(index),
            )

    def _path_diff(self, index: int) -> str:
        start = max(0, index - 3)
        recorded = [(v.pc, v.node) for v in self.cassette.trace[start : index + 1]]
        return diff_lines(path_lines(recorded), path_lines(self.visits[start:]))

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """Check the run ended where and as the recording did."""
        if error is not None:
            return
        cassette, used = self.cassette, self.model.requests
        if used < len(cassette.exchanges):
            raise ReplayDivergence(
                "end",
                used,
                f"replay diverged: the run ended after {used} of the {len(cassette.exchanges)} "
                "recorded requests",
                diff_lines(request_lines(cassette.requests()[used]), []),
            )
        output = ctx.state.output or ""
        if cassette.status == "completed" and output != cassette.output:
            raise ReplayDivergence(
                "output",
                used,
                "replay diverged: the run's answer differs from the recorded one",
                diff_lines(cassette.output.splitlines(), output.splitlines()),
            )


def _where(visit: tuple[int, str | None] | None) -> str:
    if visit is None:
        return "nothing (the recorded path ended)"
    return f"{visit[1] or 'an instruction'} at pc {visit[0]}"
