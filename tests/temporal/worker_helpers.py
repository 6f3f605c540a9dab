"""The worker tools plus a sub-agent (``helper``) that uses them, for ``ponder worker``.

Imported only by worker processes: the sub-agent's model is the fake provider the
worker's environment names.
"""

from __future__ import annotations

from ponder import Agent
from tests.temporal.worker_tools import TOOLS, record, slow_record

_HELPER = Agent(
    "openai:fake-model",
    tools=[record, slow_record],
    agent_thought_mode="chat",
    enable_thinking_tool=False,
)

HELPED = [*TOOLS, _HELPER.as_tool("helper", "Does a logging task.")]
