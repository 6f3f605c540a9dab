"""One run of the task suite: ponder or a peer, through a recording proxy, to one server.

`SuiteProxy` forwards every request to the model server and keeps, per task, each chat
request's body, its HTTP status and the usage its answer reported; `run_ponder` and
`run_peer_suite` run every task of `bench.real_model_tasks` once and give one `TaskRun`
per task. The server's log gives the prompt tokens its cache reused.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.common import ROOT, peer_python
from bench.real_model import _common_prefix
from bench.real_model_tasks import TASKS, Task, grade, make_tools
from ponder import Agent
from ponder.exceptions import PonderError
from ponder.testing._http import HttpReply, HttpRequest, LocalHttpServer
from ponder.testing.llama_server import LlamaServer
from ponder.tools import tool

__all__ = ["MAX_TOKENS", "PONDER_CONFIG", "SuiteProxy", "TaskRun", "run_peer_suite", "run_ponder"]

MAX_TOKENS = 96
PONDER_CONFIG: dict[str, Any] = {
    "max_tokens": MAX_TOKENS,
    "temperature": 0.0,
    "agent_tool_call_limit": 4,
    "llm_timeout": 600.0,
    "llm_total_timeout": 1800.0,
    "max_retries": 1,
    "step_iteration_limit": 2,
    "structured_output_retries": 1,
    "enable_thinking_tool": False,
    "agent_middle_message": False,
}
"""The configuration of every ponder run (besides workflow and thought mode)."""

MARK = "/bench/task/"


@dataclass
class Exchange:
    """One chat request through the proxy."""

    task: str
    body: dict[str, Any]
    status: int
    usage: dict[str, Any]


@dataclass
class SuiteProxy:
    """Forwards requests to ``server``; keeps each chat exchange under the current task.

    A ``GET /bench/task/<id>`` (a peer's process says which task starts) is answered here.
    """

    server: LlamaServer
    task: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    hits: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _hit_mark: int = 0

    def start_task(self, task: str) -> None:
        """Count what follows as ``task``'s."""
        self.close_task()
        self.task = task
        self._hit_mark = len(self.server.prefix_hits_all())

    def close_task(self) -> None:
        """Keep the server cache's prefix hits of the task that ends."""
        if self.task:
            self.hits[self.task] = self.server.prefix_hits_all()[self._hit_mark :]

    async def handle(self, request: HttpRequest, reply: HttpReply) -> None:
        """Forward one request and send back the upstream's answer, as it came."""
        if request.path.startswith(MARK):
            self.start_task(request.path.removeprefix(MARK))
            await reply.send(200, b"{}")
            return
        status, data = await asyncio.to_thread(self._forward, request)
        if request.path.endswith("/chat/completions"):
            exchange = Exchange(self.task, request.json(), status, _usage(data))
            self.exchanges.append(exchange)
        await reply.send(status, data)

    def _forward(self, request: HttpRequest) -> tuple[int, bytes]:
        url = self.server.base_url.removesuffix("/v1") + request.path
        sent = urllib.request.Request(
            url,
            data=request.body or None,
            method=request.method,
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(sent, timeout=1800) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


def _usage(data: bytes) -> dict[str, Any]:
    """The usage an answer reported: its JSON's, or the last stream chunk's."""
    try:
        found = json.loads(data).get("usage")
        return found if isinstance(found, dict) else {}
    except (ValueError, AttributeError):
        pass
    usage: dict[str, Any] = {}
    for line in data.decode(errors="replace").splitlines():
        if line.startswith("data: {") and '"usage"' in line:
            usage = json.loads(line[6:]).get("usage") or usage
    return usage


@dataclass
class TaskRun:
    """One task's run: its answer and grade, and what it cost."""

    task: str
    answer: str
    correct: bool
    clean: bool
    result_lost: bool
    wall: float
    error: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    hits: list[tuple[int, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON document of the run (request bodies reduced to what the metrics need)."""
        return {
            "task": self.task,
            "answer": self.answer,
            "correct": self.correct,
            "clean": self.clean,
            "result_lost": self.result_lost,
            "wall": self.wall,
            "error": self.error,
            "hits": self.hits,
            "exchanges": [
                {"status": e.status, "usage": e.usage, "tool_choice": e.body.get("tool_choice")}
                for e in self.exchanges
            ],
            "prefix_shares": self.prefix_shares(),
        }

    def prefix_shares(self) -> list[float]:
        """For each request after the first: the share of its prompt the previous one began."""
        prompts = [_prompt_text(e.body) for e in self.exchanges]
        return [
            _common_prefix(before, now) / len(now)
            for before, now in itertools.pairwise(prompts)
            if now
        ]


def _prompt_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("tools", [])) + json.dumps(body.get("messages", []))


def _graded(task: Task, answer: str, results: list[Any], wall: float, error: str) -> TaskRun:
    found = grade(task, answer, results)
    return TaskRun(task.id, answer, found.correct, found.clean, found.result_lost, wall, error)


async def run_ponder(
    proxy: SuiteProxy,
    url: str,
    profile: str,
    workflow: str,
    mode: str | None,
    tasks: Sequence[Task] = TASKS,
) -> list[TaskRun]:
    """Each task once on ponder (``mode`` None: the profile's default thought mode)."""
    runs = []
    for task in tasks:
        record: list[Any] = []
        functions = make_tools(record)
        config = dict(PONDER_CONFIG, agent_workflow=workflow)
        if mode is not None:
            config["agent_thought_mode"] = mode
        agent = Agent(
            f"{profile}:smollm2",
            tools=[tool(functions[name]) for name in task.tools],
            base_url=url,
            api_key="none",
            **config,
        )
        proxy.start_task(task.id)
        start = time.perf_counter()
        answer, error = "", ""
        try:
            answer = (await agent.run(task.prompt)).output
        except PonderError as exc:
            error = f"{type(exc).__name__}: {exc}"[:200]
        runs.append(_graded(task, str(answer), record, time.perf_counter() - start, error))
        proxy.close_task()
    return runs


async def run_peer_suite(
    proxy: SuiteProxy, url: str, peer: str, tasks: Sequence[Task] = TASKS
) -> list[TaskRun]:
    """Each task once on ``peer`` (a name `bench/peers/real_suite_peer.py` knows)."""
    control = url.removesuffix("/v1") + MARK
    script = ROOT / "bench" / "peers" / "real_suite_peer.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = await asyncio.create_subprocess_exec(
        str(peer_python()),
        str(script),
        peer,
        url,
        control,
        str(MAX_TOKENS),
        ",".join(t.id for t in tasks),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await process.communicate()
    proxy.close_task()
    if process.returncode != 0:
        sys.stderr.write(err.decode(errors="replace")[-3000:])
        raise RuntimeError(f"{peer} failed (exit {process.returncode})")
    document = json.loads(out.decode().strip().splitlines()[-1])
    by_id = {t.id: t for t in TASKS}
    runs = []
    for found in document["runs"]:
        task = by_id[found["task"]]
        answer, error = str(found.get("answer") or ""), str(found.get("error") or "")
        runs.append(_graded(task, answer, found.get("results", []), found["wall"], error))
    return runs


def attach(runs: list[TaskRun], proxy: SuiteProxy) -> list[TaskRun]:
    """Give each run its exchanges and cache hits."""
    for run in runs:
        run.exchanges = [e for e in proxy.exchanges if e.task == run.task]
        run.hits = proxy.hits.get(run.task, [])
    return runs


async def through_proxy(server: LlamaServer, runner: Any) -> list[TaskRun]:
    """``await runner(proxy, url)`` with a fresh proxy to ``server`` (fresh learning too)."""
    proxy = SuiteProxy(server)
    async with LocalHttpServer(proxy.handle) as http:
        runs = await runner(proxy, f"http://127.0.0.1:{http.port}/v1")
    return attach(runs, proxy)
