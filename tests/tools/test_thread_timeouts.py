"""Sync tools past their timeout: the truth in the error, the slot held, the process free."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from ponder.messages import ToolCallPart
from ponder.tools import ToolExecutor, ToolRegistry, tool

ROOT = Path(__file__).resolve().parents[2]


class Gauge:
    """Counts the threads inside a tool at once."""

    def __init__(self) -> None:
        self.lock, self.now, self.most, self.done = threading.Lock(), 0, 0, 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1
            self.done += 1


async def test_a_timed_out_thread_keeps_its_concurrency_slot_and_says_it_runs_on() -> None:
    gauge = Gauge()

    @tool(timeout=0.1, max_concurrency=1)
    def crawl(page: int) -> str:
        """Crawl a page slowly.

        Args:
            page: Which page.
        """
        gauge.enter()
        time.sleep(0.5)
        gauge.leave()
        return f"page {page}"

    executor = ToolExecutor(ToolRegistry([crawl]))
    calls = [ToolCallPart.from_args(f"c{i}", "crawl", {"page": i}) for i in range(3)]
    outcomes = await executor.run_batch(calls, run_id="r")
    assert [o.status for o in outcomes] == ["timeout"] * 3
    assert all("still running in the background" in o.message.content for o in outcomes)
    assert gauge.most == 1


async def test_a_tool_that_blocks_the_loop_past_its_timeout_is_reported() -> None:
    @tool(timeout=0.05, run_in_thread=False)
    def hog() -> str:
        """Block the event loop."""
        time.sleep(0.3)
        return "done"

    outcome = await ToolExecutor(ToolRegistry([hog])).run_call(
        ToolCallPart.from_args("h", "hog", {}), run_id="r"
    )
    assert outcome.status == "timeout"
    assert "blocked the event loop" in outcome.message.content


PROGRAM = """
import time
from ponder import Agent, tool
from ponder.models import ScriptedModel, call_tools, reply

@tool(timeout=0.2)
def stuck() -> str:
    '''Never finish in time.'''
    time.sleep(60)
    return "late"

script = [call_tools(("stuck", {})), call_tools(("agent_stop", {"result": "x"})), reply("gave up")]
agent = Agent(ScriptedModel(script), tools=[stuck], agent_thought_mode="chat",
              enable_thinking_tool=False)
result = agent.run_sync("try")
print(result.status, result.output)
"""


def test_the_process_exits_when_the_run_ends_with_a_thread_still_running() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=30, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "completed gave up"
