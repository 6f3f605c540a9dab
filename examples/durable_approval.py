"""A durable run that waits for approval: checkpointed to SQLite, approved, resumed.

The run suspends before the approval-gated tool runs; any process with the store can
resume it. Here a second agent, built afresh, approves it.

    python examples/durable_approval.py              # OPENAI_API_KEY, or --model / --base-url
    python examples/durable_approval.py --offline    # ponder's fake OpenAI server plays the model
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from offline import arguments, call, provider
from ponder import Agent, tool
from ponder.store import open_store
from ponder.testing import FakeReply


@tool(requires_approval=True)
def deploy(version: str) -> str:
    """Deploy a version to production.

    Args:
        version: The version to deploy.
    """
    return f"deployed {version}"


SCRIPT = [
    call("think_and_reason", last_step="", summary="Deploy 1.2.0."),
    call("deploy", version="1.2.0"),
    call("think_and_reason", last_step="deployed", summary="Report it."),
    call("agent_stop", result="deployed 1.2.0"),
    FakeReply(content="Version 1.2.0 is deployed."),
]


async def main() -> None:
    """Start the run, show what waits for approval, approve it from a fresh agent."""
    options = arguments(__doc__ or "")
    with tempfile.TemporaryDirectory() as folder, provider(options, SCRIPT) as model:
        store = open_store(f"sqlite:///{Path(folder) / 'runs.sqlite3'}")
        first = Agent(**model, tools=[deploy], store=store)
        result = await first.run("Deploy version 1.2.0.")
        print(f"status: {result.status}")
        assert result.suspension is not None
        for pending in result.suspension["payload"]["calls"]:
            print(f"waiting for approval: {pending['name']} {pending['arguments']}")

        second = Agent(**model, tools=[deploy], store=store)  # e.g. in another process
        done = await second.resume(result.run_id, "approve")
        print(f"status: {done.status}")
        print(f"answer: {done.output}")
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
