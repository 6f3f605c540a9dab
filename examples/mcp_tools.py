"""An agent with an MCP server's tools: ponder's own thinking server, over stdio.

Any MCP server works the same way: a stdio command, an ``http(s)://`` URL or ``sse://``
in ``agent_mcp_server_scripts`` (for instance ``'stdio://["npx", "-y",
"@modelcontextprotocol/server-memory"]'``). Needs ``pip install 'ponder[mcp]'``.

    python examples/mcp_tools.py              # OPENAI_API_KEY, or --model / --base-url
    python examples/mcp_tools.py --offline    # ponder's fake OpenAI server plays the model
"""

from __future__ import annotations

import json
import sys

from offline import arguments, call, provider
from ponder import Agent
from ponder.testing import FakeReply

SERVER = "stdio://" + json.dumps([sys.executable, "-m", "ponder.cli.main", "mcp", "thinking"])

SCRIPT = [
    call("think_and_reason", last_step="", summary="Think it through with the MCP tool."),
    call(
        "sequentialthinking",
        thought="Caching helps when reads repeat.",
        thought_number=1,
        total_thoughts=1,
        next_thought_needed=False,
    ),
    call("think_and_reason", last_step="thought once", summary="Answer."),
    call("agent_stop", result="cache repeated reads"),
    FakeReply(content="Cache when the same reads repeat."),
]


def main() -> None:
    """List the server's tools, run the agent, print each tool call and the answer."""
    options = arguments(__doc__ or "")
    with provider(options, SCRIPT) as model:
        agent = Agent(
            **model,
            agent_mcp_client_enable=True,
            agent_mcp_server_scripts=[SERVER],
        )
        for event in agent.stream_sync("When should I add a cache?"):
            if event.kind == "tool_call_finished" and event.name != "think_and_reason":
                print(f"mcp tool {event.name}: {' '.join(event.output.split())[:60]}")
            elif event.kind == "tool_call_failed":
                print(f"tool {event.name} failed: {event.error}")
            elif event.kind == "mcp_event" and event.type == "connect_failed":
                print(f"the MCP server failed: {event.data}")
            elif event.kind == "run_finished":
                print(f"answer: {event.output}")


if __name__ == "__main__":
    main()
