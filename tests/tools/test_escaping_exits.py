"""``sys.exit``, ``KeyboardInterrupt`` and ``GeneratorExit`` in a tool end that call only."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.tools import tool


@tool
def quit_in_thread(code: int) -> str:
    """Exit the process from a worker thread.

    Args:
        code: The exit code.
    """
    sys.exit(code)


@tool
async def quit_inline(code: int) -> str:
    """Exit the process from the event loop.

    Args:
        code: The exit code.
    """
    sys.exit(code)


@tool
async def interrupt() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@tool(run_in_thread=False)
def close_generator() -> str:
    """Raise GeneratorExit."""
    raise GeneratorExit


@tool
async def fine() -> str:
    """Succeed."""
    return "fine"


def agent() -> Agent:
    model = ScriptedModel(
        [
            call_tools(
                ("quit_in_thread", {"code": 0}),
                ("quit_inline", {"code": 3}),
                ("interrupt", {}),
                ("close_generator", {}),
                ("fine", {}),
            ),
            call_tools(("agent_stop", {"result": "done"})),
            reply("still here"),
        ]
    )
    return Agent(
        model,
        tools=[quit_in_thread, quit_inline, interrupt, close_generator, fine],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


async def test_exits_inside_tools_become_error_results_and_the_run_goes_on() -> None:
    result = await agent().run("try to leave")
    assert result.status == "completed" and result.output == "still here"
    answers = {m.name: m for m in result.messages if isinstance(m, ToolMessage)}
    for name, kind in [
        ("quit_in_thread", "SystemExit"),
        ("quit_inline", "SystemExit"),
        ("interrupt", "KeyboardInterrupt"),
        ("close_generator", "GeneratorExit"),
    ]:
        assert answers[name].is_error, name
        assert kind in answers[name].content and "process goes on" in answers[name].content
    assert answers["fine"].content == "fine" and not answers["fine"].is_error


async def test_cancelling_the_run_still_cancels_a_running_tool() -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Wait."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    model = ScriptedModel([call_tools(("wait_forever", {})), reply("x")])
    slow = Agent(model, tools=[wait_forever], agent_thought_mode="chat")
    task = asyncio.create_task(slow.run("wait"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
