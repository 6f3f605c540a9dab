"""Reflection's three checks: one request returning all three vs three forced requests.

Both runs go through the real agent and the OpenAI SDK against the fake server; only the
model's behaviour differs (three ``verify_reasoning`` calls in one reply, or one per reply,
which makes ponder ask for the two missing checks one at a time). Tokens are counted for
the reflection requests only, as the fake provider counts them: characters / 4 of the
request's messages and tool definitions (prompt), and of the reply (completion).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bench.common import fmt_ratio, table
from ponder.agent import Agent
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

CHECKS = ("self_check", "contradiction_check", "completeness_check")


def _fetcher(size: int) -> Any:
    @tool
    def fetch(page: int) -> str:
        """Fetch one page of the report.

        Args:
            page: The page number.
        """
        return f"page {page}: " + "figures and notes " * (size // 18)

    return fetch


def _verify(check: str) -> FakeToolCall:
    detail = f"{check.replace('_', ' ')} holds for every step"
    return FakeToolCall(
        name="verify_reasoning",
        arguments={"check_type": check, "result": "pass", "detail": detail},
    )


def _script(rounds: int, together: bool) -> list[FakeReply]:
    replies = [
        FakeReply(tool_calls=[FakeToolCall(name="fetch", arguments={"page": n})])
        for n in range(1, rounds + 1)
    ]
    replies.append(FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})]))
    if together:
        replies.append(FakeReply(tool_calls=[_verify(c) for c in CHECKS]))
    else:
        replies += [FakeReply(tool_calls=[_verify(c)]) for c in CHECKS]
    replies.append(FakeReply(content="The report's figures add up."))
    return replies


def _tokens(body: dict[str, Any], reply: FakeReply) -> int:
    prompt = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools", [])))
    completion = sum(len(c.argument_text) for c in reply.tool_calls) + len(reply.content or "")
    return prompt // 4 + completion // 4 + 1


async def _measure(rounds: int, size: int, together: bool) -> tuple[int, int]:
    """(reflection requests, their tokens) for one run."""
    script = _script(rounds, together)
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:fake",
            tools=[_fetcher(size)],
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            enable_reflection=True,
            agent_tool_call_limit=20,
        )
        result = await agent.run("Check the report's figures.")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "The report's figures add up.", result.output
    pairs = [
        (body, reply)
        for body, reply in zip(server.requests, script, strict=True)
        if [t["function"]["name"] for t in body.get("tools", [])] == ["verify_reasoning"]
    ]
    return len(pairs), sum(_tokens(body, reply) for body, reply in pairs)


async def _rows() -> list[list[str]]:
    rows = []
    for rounds, size in ((2, 300), (6, 2000), (12, 4000)):
        one_requests, one = await _measure(rounds, size, together=True)
        three_requests, three = await _measure(rounds, size, together=False)
        rows.append(
            [
                f"{rounds} tool rounds × {size} chars",
                f"{one} ({one_requests} request)",
                f"{three} ({three_requests} requests)",
                fmt_ratio(three, one),
            ]
        )
    return rows


def run() -> str:
    """The Markdown section."""
    rows = asyncio.run(_rows())
    headers = ["transcript", "one request, tokens", "three requests, tokens", "three / one"]
    return "## Reflection: three checks in one request or three\n\n" + table(headers, rows)


if __name__ == "__main__":
    print(run())
