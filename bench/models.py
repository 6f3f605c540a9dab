"""Model-layer overhead: one scripted request, and one loopback round trip to the fake."""

from __future__ import annotations

import asyncio
import time

from bench.common import fmt_us, table
from ponder.messages import SystemMessage, UserMessage
from ponder.models import (
    ModelRequest,
    OpenAIModel,
    ScriptedModel,
    estimate_messages_tokens,
    reply,
)
from ponder.testing import FakeOpenAIServer

REQUEST = ModelRequest(messages=[SystemMessage(content="Be brief."), UserMessage(content="hi")])
LONG = [UserMessage(content="word " * 200 + "汉字" * 50) for _ in range(100)]


async def _per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    for _ in range(min(n, 20)):
        await fn()
    start = time.perf_counter()
    for _ in range(n):
        await fn()
    return (time.perf_counter() - start) / n


async def _measure() -> list[tuple[str, float]]:
    n = 2000
    model = ScriptedModel([reply("The answer is 3.")] * (n + 20))
    scripted = await _per_call(lambda: model.request(REQUEST), n)
    streaming = ScriptedModel([reply("The answer is 3.")] * (n + 20))

    async def drain() -> None:
        async for _ in streaming.stream(REQUEST):
            pass

    scripted_stream = await _per_call(drain, n)
    rounds = 300
    async with FakeOpenAIServer(lambda body: "The answer is 3.") as server:
        adapter = OpenAIModel("bench", api_key="k", base_url=server.base_url)
        http = await _per_call(lambda: adapter.request(REQUEST), rounds)

        async def drain_http() -> None:
            async for _ in adapter.stream(REQUEST):
                pass

        http_stream = await _per_call(drain_http, rounds)
        await adapter.aclose()
    start = time.perf_counter()
    for _ in range(100):
        estimate_messages_tokens(LONG)
    estimate = (time.perf_counter() - start) / 100
    return [
        ("ScriptedModel.request", scripted),
        ("ScriptedModel.stream (drained)", scripted_stream),
        ("OpenAIModel.request → fake server (loopback HTTP)", http),
        ("OpenAIModel.stream → fake server (drained)", http_stream),
        ("estimate_messages_tokens, 100 messages × 1.1k chars", estimate),
    ]


def run() -> str:
    rows = [(name, fmt_us(seconds)) for name, seconds in asyncio.run(_measure())]
    return (
        "## Models\n\n"
        "Mean time per call. The HTTP rows include the fake server's own work in the same "
        "process and event loop (JSON encoding, SSE framing), so they overstate the adapter.\n\n"
        + table(["operation", "time per call"], rows)
    )


if __name__ == "__main__":
    print(run())
