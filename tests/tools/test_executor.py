"""The executor: concurrent batches, isolation, timeouts, limits, state, cancellation."""

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.exceptions import UserError
from ponder.messages import AssistantMessage, Ledger, ToolCallPart
from ponder.tools import (
    ArgumentError,
    ToolContext,
    ToolExecutor,
    ToolOutcome,
    ToolRegistry,
    ToolResult,
    make_tool,
    tool,
)


class Gate:
    """Opens once ``size`` callers have arrived: proves they ran at the same time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.arrived = 0
        self.open = asyncio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived >= self.size:
            self.open.set()
        await self.open.wait()


def call(id: str, name: str, arguments: str) -> ToolCallPart:
    return ToolCallPart.from_raw(id, name, arguments)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_batch_of_eight_isolates_a_failure_and_a_timeout() -> None:
    gate = Gate(7)

    @tool
    async def echo(text: str) -> str:
        """Echo after every sibling has started."""
        await gate.wait()
        return text

    @tool
    async def explode() -> str:
        """Fail after every sibling has started."""
        await gate.wait()
        raise RuntimeError("broken on purpose")

    @tool(timeout=0.2)
    async def hang() -> str:
        """Never finish."""
        await asyncio.Event().wait()
        return "unreachable"

    executor = ToolExecutor(ToolRegistry([echo, explode, hang]), default_timeout=30)
    calls = [call(f"id{i}", "echo", f'{{"text": "t{i}"}}') for i in range(8)]
    calls[2] = call("id2", "explode", "{}")
    calls[5] = call("id5", "hang", "{}")
    finished: list[str] = []
    outcomes = await executor.run_batch(
        calls, run_id="r1", on_finish=lambda o: finished.append(o.call.id)
    )

    assert [o.call.id for o in outcomes] == [c.id for c in calls]
    assert [o.message.call_id for o in outcomes] == [c.id for c in calls]
    assert [o.status for o in outcomes] == ["ok"] * 2 + ["error"] + ["ok"] * 2 + ["timeout"] + [
        "ok"
    ] * 2
    good = [o.message.content for o in outcomes if o.status == "ok"]
    assert good == ["t0", "t1", "t3", "t4", "t6", "t7"]
    assert outcomes[2].message.content == "Error: RuntimeError: broken on purpose"
    assert "did not finish within 0.2 seconds" in outcomes[5].message.content
    assert outcomes[2].is_error and outcomes[5].message.is_error
    assert sorted(finished) == sorted(c.id for c in calls)

    ledger = Ledger([AssistantMessage(parts=tuple(calls))])
    ledger.extend(o.message for o in outcomes)
    ledger.ensure_sendable()


async def test_a_blocking_sync_tool_times_out_without_blocking_its_siblings() -> None:
    release = threading.Event()

    @tool(timeout=0.2)
    def block() -> str:
        """Block a worker thread."""
        release.wait(30)
        return "late"

    try:
        executor = ToolExecutor(ToolRegistry([block, add]))
        outcomes = await executor.run_batch(
            [call("1", "block", "{}"), call("2", "add", '{"a": 1, "b": 2}')], run_id="r"
        )
    finally:
        release.set()
    assert [o.status for o in outcomes] == ["timeout", "ok"]
    assert outcomes[1].message.content == "3"


MALFORMED = [
    ('{"a": 1, "b": ', "- arguments are not valid JSON: Expecting value at position 13"),
    ("[1, 2]", "- arguments must be a JSON object"),
    ('{"a": "x", "b": 2}', "- a: expected an integer, received string 'x'"),
    ('{"a": 1}', "- b: missing (expected an integer)"),
    ('{"a": 1, "b": true}', "- b: expected an integer, received true"),
    ('{"a": 1, "b": 2, "c": 3}', "- c: unexpected field; remove it (allowed fields: a, b)"),
    ('{"a": [1], "b": "0x2"}', "- a: expected an integer, received array\n- b: expected an"),
]


@pytest.mark.parametrize(("arguments", "line"), MALFORMED)
async def test_malformed_arguments_come_back_as_results_that_name_the_field(
    arguments: str, line: str
) -> None:
    executor = ToolExecutor(ToolRegistry([add]))
    outcome = await executor.run_call(call("c", "add", arguments), run_id="r")
    assert outcome.status == "invalid_arguments"
    text = outcome.message.content
    assert text.startswith("Error: invalid arguments for tool 'add':\n")
    assert line in text
    assert text.endswith("\nFix the arguments and call the tool again.")
    assert outcome.result.data["issues"]


async def test_the_documented_error_text() -> None:
    executor = ToolExecutor(ToolRegistry([add]))
    outcome = await executor.run_call(call("c", "add", '{"a": "x"}'), run_id="r")
    assert outcome.message.content == (
        "Error: invalid arguments for tool 'add':\n"
        "- a: expected an integer, received string 'x'\n"
        "- b: missing (expected an integer)\n"
        "Fix the arguments and call the tool again."
    )


async def test_repairable_text_is_repaired_even_when_strict_parsing_failed() -> None:
    broken = call("c", "add", '```json\n{"a": "2", "b": 3,}\n```')
    assert broken.args is None and broken.args_error
    outcome = await ToolExecutor(ToolRegistry([add])).run_call(broken, run_id="r")
    assert (outcome.status, outcome.message.content) == ("ok", "5")


async def test_unknown_tools_name_the_available_ones() -> None:
    executor = ToolExecutor(ToolRegistry([add]))
    outcome = await executor.run_call(call("c", "ad", "{}"), run_id="r")
    assert outcome.status == "unknown_tool"
    assert outcome.message.content == (
        "Error: unknown tool 'ad'. Available tools: add. Did you mean 'add'?"
    )


async def test_tools_may_reject_arguments_themselves() -> None:
    @tool
    def divide(a: float, b: float) -> float:
        """Divide."""
        if b == 0:
            raise ArgumentError("b: must not be zero")
        return a / b

    def broken_validator(args: dict[str, Any]) -> dict[str, Any]:
        raise LookupError("validator bug")

    odd = make_tool("odd", "", {"type": "object"}, lambda: "x", validator=broken_validator)
    executor = ToolExecutor(ToolRegistry([divide, odd]))
    outcomes = await executor.run_batch(
        [call("1", "divide", '{"a": 1, "b": 0}'), call("2", "odd", "{}")], run_id="r"
    )
    assert outcomes[0].status == "invalid_arguments"
    assert "- b: must not be zero" in outcomes[0].message.content
    assert outcomes[1].status == "error"
    assert "LookupError: validator bug" in outcomes[1].message.content


async def test_a_tool_raising_its_own_timeout_error_is_an_error_not_a_timeout() -> None:
    @tool
    async def slow_backend() -> str:
        """Fail with the backend's timeout."""
        raise TimeoutError("backend took too long")

    outcome = await ToolExecutor(ToolRegistry([slow_backend])).run_call(
        call("1", "slow_backend", "{}"), run_id="r"
    )
    assert outcome.status == "error"
    assert outcome.message.content == "Error: TimeoutError: backend took too long"


async def test_concurrency_limit_per_tool() -> None:
    active = peak = 0

    @tool(max_concurrency=2)
    async def limited(n: int) -> int:
        """Count overlapping calls."""
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        for _ in range(5):
            await asyncio.sleep(0)
        active -= 1
        return n

    executor = ToolExecutor(ToolRegistry([limited]))
    outcomes = await executor.run_batch(
        [call(str(i), "limited", f'{{"n": {i}}}') for i in range(6)], run_id="r"
    )
    assert [o.message.content for o in outcomes] == [str(i) for i in range(6)]
    assert peak == 2


class Counter(BaseModel):
    count: int = 0
    seen: list[str] = []


@tool(state_type=Counter)
async def bump(ctx: ToolContext) -> int:
    """Read, yield, then write: loses updates unless calls take turns."""
    assert isinstance(ctx.state, Counter) and ctx.lock is not None and ctx.lock.locked()
    value = ctx.state.count
    await asyncio.sleep(0)
    ctx.state.count = value + 1
    ctx.state.seen.append(ctx.call_id)
    return ctx.state.count


async def test_stateful_calls_in_one_run_take_turns_on_one_state() -> None:
    executor = ToolExecutor(ToolRegistry([bump]))
    states: dict[str, BaseModel] = {}
    outcomes = await executor.run_batch(
        [call(str(i), "bump", "{}") for i in range(5)], run_id="r", states=states
    )
    assert sorted(int(o.message.content) for o in outcomes) == [1, 2, 3, 4, 5]
    assert states["bump"] == Counter(count=5, seen=["0", "1", "2", "3", "4"])

    restored: dict[str, BaseModel] = {
        "bump": Counter.model_validate_json(states["bump"].model_dump_json())
    }
    await executor.run_batch([call("5", "bump", "{}")], run_id="r", states=restored)
    assert restored["bump"].count == 6  # type: ignore[attr-defined]


async def test_state_saved_as_plain_data_is_restored_before_the_call() -> None:
    states: dict[str, Any] = {"bump": {"count": 41, "seen": []}}
    executor = ToolExecutor(ToolRegistry([bump]))
    outcome = await executor.run_call(call("1", "bump", ""), run_id="r", states=states)
    assert outcome.message.content == "42" and isinstance(states["bump"], Counter)

    states = {"bump": {"count": "not a number"}}
    outcome = await executor.run_call(call("2", "bump", ""), run_id="r", states=states)
    assert outcome.status == "error"
    assert "saved state is unusable" in outcome.message.content


async def test_different_runs_never_wait_on_each_other() -> None:
    handoff = asyncio.Event()

    @tool(state_type=Counter)
    async def relay(ctx: ToolContext, role: str) -> str:
        """The waiter holds its run's lock until the other run's call gets through."""
        if role == "wait":
            await handoff.wait()
        else:
            handoff.set()
        return role

    executor = ToolExecutor(ToolRegistry([relay]), default_timeout=10)
    first, second = await asyncio.gather(
        executor.run_call(call("a", "relay", '{"role": "wait"}'), run_id="A", states={}),
        executor.run_call(call("b", "relay", '{"role": "go"}'), run_id="B", states={}),
    )
    assert (first.status, second.status) == ("ok", "ok")


async def test_cancelling_the_run_cancels_the_batch_and_reports_each_call() -> None:
    started = Gate(3)
    stopped: list[str] = []

    @tool
    async def wait_forever(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        try:
            await started.wait()
            await asyncio.Event().wait()
        finally:
            stopped.append(ctx.call_id)
        return "unreachable"

    finished: list[ToolOutcome] = []
    executor = ToolExecutor(ToolRegistry([wait_forever]), default_timeout=None)
    batch = asyncio.create_task(
        executor.run_batch(
            [call(str(i), "wait_forever", "{}") for i in range(3)],
            run_id="r",
            on_finish=finished.append,
        )
    )
    await started.open.wait()
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert sorted(stopped) == ["0", "1", "2"]
    assert sorted(o.call.id for o in finished) == ["0", "1", "2"]
    assert {o.status for o in finished} == {"cancelled"}


async def test_long_output_is_truncated_for_the_model_and_kept_whole() -> None:
    text = "".join(f"{i:05d}" for i in range(10_000))

    @tool
    def dump() -> str:
        """A lot of text."""
        return text

    @tool
    def table() -> list[int]:
        """A lot of structured data."""
        return list(range(5_000))

    executor = ToolExecutor(ToolRegistry([dump, table]), max_output_chars=1000)
    plain, structured = await executor.run_batch(
        [call("1", "dump", ""), call("2", "table", "")], run_id="r"
    )
    assert plain.truncated_chars == 49_000
    assert "[... 49000 of 50000 characters cut here;" in plain.message.content
    assert plain.message.content.startswith(text[:666])
    assert plain.message.content.endswith(text[-334:])
    assert len(plain.message.content) < 1200
    assert plain.result.output == text and plain.message.data == text
    assert structured.truncated_chars > 0
    assert structured.message.data == list(range(5_000))

    small = await ToolExecutor(ToolRegistry([add]), max_output_chars=1000).run_call(
        call("3", "add", '{"a": 1, "b": 1}'), run_id="r"
    )
    assert small.truncated_chars == 0 and small.message.content == "2"


@pytest.mark.parametrize(
    ("returned", "content", "data"),
    [
        (ToolResult.ok("3", data=3), "3", 3),  # the usual result, kept as it is
        (ToolResult.ok("très bien", data=2.5), "très bien", 2.5),
        (ToolResult.ok("bad \udc00", data=3), "bad \ufffd", 3),  # numeric data, odd text
        (ToolResult.ok("ok", data="odd \ud800"), "ok", "odd \ufffd"),
        (ToolResult.ok("ok", data={1, 2}), "ok", [1, 2]),
    ],
)
async def test_every_result_is_stored_as_text_and_json_any_store_can_encode(
    returned: ToolResult, content: str, data: Any
) -> None:
    @tool(run_in_thread=False)
    def answer() -> ToolResult:
        """Return the prepared result."""
        return returned

    outcome = await ToolExecutor(ToolRegistry([answer])).run_call(
        call("1", "answer", ""), run_id="r"
    )
    assert outcome.status == "ok"
    assert (outcome.message.content, outcome.message.data) == (content, data)


async def test_callbacks_fire_once_per_call_and_may_be_async() -> None:
    events: list[str] = []

    async def finished(outcome: ToolOutcome) -> None:
        events.append(f"finish:{outcome.call.id}:{outcome.status}")

    executor = ToolExecutor(ToolRegistry([add]))
    await executor.run_batch(
        [call("1", "add", '{"a": 1, "b": 2}'), call("2", "nope", "{}")],
        run_id="r",
        on_start=lambda c: events.append(f"start:{c.id}"),
        on_finish=finished,
    )
    assert sorted(events) == ["finish:1:ok", "finish:2:unknown_tool", "start:1", "start:2"]


async def test_an_empty_batch_is_an_empty_list() -> None:
    assert await ToolExecutor(ToolRegistry()).run_batch([], run_id="r") == []


async def test_a_pydantic_validator_reports_fields_like_the_built_in_one() -> None:
    class Window(BaseModel):
        width: int
        height: int

    sized = make_tool(
        "sized",
        "Size a window.",
        Window.model_json_schema(),
        lambda width, height: width * height,
        validator=lambda args: Window.model_validate(args, strict=True).model_dump(),
    )
    executor = ToolExecutor(ToolRegistry([sized]))
    good, bad = await executor.run_batch(
        [call("1", "sized", '{"width": 2, "height": 3}'), call("2", "sized", '{"width": "2"}')],
        run_id="r",
    )
    assert good.message.content == "6"
    assert bad.status == "invalid_arguments"
    assert "- width: Input should be a valid integer, received string '2'" in bad.message.content
    assert "- height: missing" in bad.message.content


@pytest.mark.parametrize(
    "options", [{"default_timeout": 0}, {"default_timeout": -1.0}, {"max_output_chars": 0}]
)
def test_executor_refuses_bad_settings(options: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        ToolExecutor(ToolRegistry(), **options)
