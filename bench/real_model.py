"""Real model: ponder on SmolLM2-135M behind the stock llama.cpp server, per thought mode.

One task ("What is 17 times 23? Use the multiply tool.", a multiply tool, the
``llamacpp:`` profile, ``max_tokens`` 48, two rounds at most, temperature 0, ``n_ctx``
4096, no ``sequential_thinking`` and no middle messages, for a short prompt), one run per
workflow and thought mode, not streamed. Columns: model requests, prompt and completion
tokens as the server reports them, wall time, how the run stopped; **prefix stability**:
the share of each request's prompt (tools, then messages, as sent on the wire) that
repeats the previous request's prompt from its start, the mean over every request after
the first (what a provider's prompt cache can reuse); and **server cache**: the prompt
tokens llama.cpp reused from its cache over all prompt tokens it was given. A 135M
model answers badly; these rows measure cost, not quality. Wall times depend on the
machine's load; compare the rows with each other. Run alone with ``python -m
bench.real_model`` (it rewrites its own section of bench/RESULTS.md).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import common
from bench.common import ROOT, table
from ponder import Agent
from ponder.exceptions import ModelError
from ponder.testing._http import HttpReply, HttpRequest, LocalHttpServer
from ponder.testing.llama_server import LlamaServer
from ponder.tools import tool

__all__ = ["run"]

TITLE = "## Real model (SmolLM2-135M, stock llama.cpp server)"
TASK = "What is 17 times 23? Use the multiply tool."
CASES = [("react", mode) for mode in ("reasoning-required", "reasoning", "inline", "chat")]
CASES += [("step-react", "chat")]
CONFIG: dict[str, Any] = {
    "max_tokens": 48,
    "temperature": 0.0,
    "agent_tool_call_limit": 2,
    "llm_timeout": 600.0,
    "llm_total_timeout": 1800.0,
    "max_retries": 1,
    "step_iteration_limit": 1,
    "structured_output_retries": 1,
    "enable_thinking_tool": False,
    "agent_middle_message": False,
}


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@dataclass
class RecordingProxy:
    """Forwards chat requests to ``upstream`` and keeps every request body, in order."""

    upstream: str
    bodies: list[dict[str, Any]] = field(default_factory=list)

    async def handle(self, request: HttpRequest, reply: HttpReply) -> None:
        """Forward one request (not streamed) and send back the upstream's answer."""
        self.bodies.append(request.json())
        status, data = await asyncio.to_thread(self._forward, request)
        await reply.send(status, data)

    def _forward(self, request: HttpRequest) -> tuple[int, bytes]:
        url = self.upstream.removesuffix("/v1") + request.path
        sent = urllib.request.Request(
            url,
            data=request.body,
            method=request.method,
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(sent, timeout=1800) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


def prefix_stability(bodies: list[dict[str, Any]]) -> float | None:
    """Mean share of each prompt (after the first) that repeats the previous one's start."""
    prompts = [json.dumps(b.get("tools", [])) + json.dumps(b.get("messages", [])) for b in bodies]
    shares = [
        _common_prefix(before, now) / len(now) for before, now in itertools.pairwise(prompts) if now
    ]
    return sum(shares) / len(shares) if shares else None


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def lane_python() -> Path | None:
    """The real-model lane's interpreter, if ``make test-models`` has built it."""
    given = os.environ.get("PONDER_MODELS_PYTHON")
    python = Path(given) if given else ROOT / ".cache" / "models" / "bin" / "python"
    return python if python.exists() else None


async def _one(server: LlamaServer, url: str, workflow: str, mode: str) -> dict[str, Any]:
    agent = Agent(
        "llamacpp:smollm2",
        tools=[multiply],
        base_url=url,
        api_key="none",
        agent_workflow=workflow,
        agent_thought_mode=mode,
        **CONFIG,
    )
    server.mark()
    start = time.perf_counter()
    try:
        result = await agent.run(TASK)
    except ModelError as error:  # a row that says so, not a lost section
        return {"error": type(error).__name__, "wall": time.perf_counter() - start}
    wall = time.perf_counter() - start
    hits = server.prefix_hits
    reused = sum(h for h, _ in hits)
    given = sum(h + r for h, r in hits)
    return {
        "requests": result.usage.requests,
        "prompt": result.usage.input_tokens,
        "completion": result.usage.output_tokens,
        "wall": wall,
        "stop": result.stop_reason,
        "cache": reused / given if given else None,
        "refused": sum(1 for s in server.statuses if s >= 400),
    }


async def _measure(python: Path) -> list[list[Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server = LlamaServer(Path(tmp) / "server.log", python=str(python), n_ctx=4096)
        server.start()
        try:
            for workflow, mode in CASES:
                proxy = RecordingProxy(server.base_url)
                async with LocalHttpServer(proxy.handle) as http:
                    url = f"http://127.0.0.1:{http.port}/v1"
                    one = await _one(server, url, workflow, mode)
                rows.append(_row(workflow, mode, one, prefix_stability(proxy.bodies)))
        finally:
            server.stop()
    return rows


def _row(workflow: str, mode: str, one: dict[str, Any], stability: float | None) -> list[Any]:
    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value:.0%}"

    if "error" in one:
        wall = f"{one['wall']:.0f} s"
        return [workflow, mode, "–", "–", "–", wall, one["error"], pct(stability), "–", "–"]

    return [
        workflow,
        mode,
        one["requests"],
        one["prompt"],
        one["completion"],
        f"{one['wall']:.0f} s",
        one["stop"],
        pct(stability),
        pct(one["cache"]),
        one["refused"],
    ]


HEADERS = [
    "workflow",
    "thought mode",
    "requests",
    "prompt tokens",
    "completion tokens",
    "wall",
    "stop reason",
    "prefix stability",
    "server cache",
    "refused (4xx/5xx)",
]


def run() -> str:
    """The Markdown section (a note instead when the lane's venv is absent)."""
    intro = (__doc__ or "").split("\n\n", 1)[0].split(": ", 1)[1].strip()
    python = lane_python()
    if python is None:
        return f"{TITLE}\n\nSkipped: the real-model venv is absent (`make test-models` builds it)."
    rows = asyncio.run(_measure(python))
    body = (__doc__ or "").split("\n\n", 1)[1].strip()
    return f"{TITLE}\n\n{intro}\n\n{body}\n\n{table(HEADERS, rows)}"


def write_section(section: str, path: Path = ROOT / "bench" / "RESULTS.md") -> None:
    """Put ``section`` into RESULTS.md in place of its previous version (or at the end)."""
    common.write_section(section, path)


if __name__ == "__main__":
    result = run()
    print(result)
    write_section(result)
