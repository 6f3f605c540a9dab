"""ponder's workflows against a real model behind the stock llama.cpp server.

SmolLM2-135M answers badly, so these tests assert behaviour only: each run ends cleanly
with a stop reason, the server accepted every request ponder did not degrade from, the
ledger is valid, the number of requests is bounded, and degradations are reported as
events. Never answer quality.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ponder import Agent
from ponder.events import Event
from ponder.messages import AssistantMessage, Message, TextPart, UserMessage, ensure_sendable
from ponder.models.capabilities import forget_learned, learned_window
from ponder.testing.llama_server import LlamaServer
from tests.models_real.lane_tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]
PONDER = str(Path(sys.executable).with_name("ponder"))
TASK = "What is 17 times 23? Use the multiply tool."
STOP_REASONS = {
    "answered",
    "answered_without_stop",
    "round_limit",
    "call_limit",
    "loop",
    "empty_answer",
    "content_filter",
}
SMALL = {
    "max_tokens": 48,
    "temperature": 0.0,
    "agent_tool_call_limit": 2,
    "llm_timeout": 300.0,
    "llm_total_timeout": 900.0,
    "max_retries": 1,
    "agent_middle_message": False,
}
LEAN = {"enable_thinking_tool": False}  # a shorter prompt: the lane runs on a busy CPU


def _agent(server: LlamaServer, model: str, **config: Any) -> tuple[Agent, list[Event]]:
    agent = Agent(
        model, tools=TOOLS, base_url=server.base_url, api_key="none", **{**SMALL, **config}
    )
    events: list[Event] = []
    agent.on_event()(events.append)
    return agent, events


def _kinds(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def _accepted_or_compacted(server: LlamaServer, events: list[Any]) -> bool:
    """Every request was accepted, but for prompts over the window each run compacted after.

    The server states its window only by refusing (400) a prompt that overflows it; how
    long the conversation grows depends on what the model says, which differs by CPU.
    """
    refused = [s for s in server.statuses if s != 200]
    return set(refused) <= {400} and len(refused) <= len(_kinds(events, "compaction"))


def test_react_through_the_python_api(server: LlamaServer) -> None:
    agent, events = _agent(server, "llamacpp:smollm2", **LEAN)
    result = agent.run_sync(TASK)
    assert result.status == "completed" and result.stop_reason in STOP_REASONS
    ensure_sendable(result.messages)
    assert 2 <= result.usage.requests <= 12
    assert server.statuses and _accepted_or_compacted(server, events)  # no probing needed
    degraded = {e.feature: e.source for e in _kinds(events, "model_degraded")}
    assert degraded.get("required_tool_choice") == "profile"
    assert "<tool_call>" not in result.output and "BEGIN_OF" not in result.output


def test_react_through_ponder_run_streaming_learns_the_server(
    server: LlamaServer, tmp_path: Path
) -> None:
    # The generic openai profile knows nothing of llama.cpp: every refusal must be
    # detected, degraded from and reported, and the run must still end cleanly.
    forget_learned()
    config = tmp_path / "ponder.toml"
    values = {**SMALL, **LEAN, "agent_thought_mode": "chat", "max_retries": 0}
    config.write_text(
        "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
        + f'\nbase_url = "{server.base_url}"\napi_key = "none"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            PONDER,
            "run",
            TASK,
            "--model",
            "openai:smollm2",
            "--config",
            str(config),
            "--tools",
            "tests.models_real.lane_tools:TOOLS",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    finished = [e for e in events if e["kind"] == "run_finished"]
    assert finished and finished[0]["stop_reason"] in STOP_REASONS
    detected = [e for e in events if e["kind"] == "model_degraded" and e["source"] == "detected"]
    assert {e["feature"] for e in detected} >= {"required_tool_choice"}
    refused = [s for s in server.statuses if s >= 500]
    assert len(refused) <= len(detected)  # every refusal led to a degradation
    assert finished[0]["usage"]["requests"] <= 12


def test_step_react_with_sequential_thinking_and_an_mcp_tool(server: LlamaServer) -> None:
    entry = "stdio://" + json.dumps([sys.executable, "-m", "ponder.mcp.thinking.server"])
    agent, events = _agent(
        server,
        "llamacpp:smollm2",
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=True,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[entry],
        step_iteration_limit=1,
        structured_output_retries=1,
    )

    async def run() -> list[Event]:
        async with agent:
            stream = agent.stream(TASK)
            seen = [e async for e in stream]
            ensure_sendable(stream.result.messages)
            return seen

    streamed = asyncio.run(run())
    finished = _kinds(streamed, "run_finished")
    assert finished and finished[0].stop_reason
    assert any(e.kind == "text_delta" for e in streamed) or finished[0].output == ""
    assert _accepted_or_compacted(server, streamed)
    assert _kinds(events, "model_degraded")
    tools = {t.name for t in agent.tool_registry().definitions()}
    assert {"multiply", "sequential_thinking", "sequentialthinking"} <= tools
    assert finished[0].usage["requests"] <= 30


def test_a_history_longer_than_the_window_is_cut_to_fit(server: LlamaServer) -> None:
    # The server runs with an 8192-token window and says so only when a prompt overflows it:
    # the run learns the window from that refusal, drops the oldest turns, and goes on.
    forget_learned()
    notes = "The meeting notes say the budget was approved and the launch moved to May. " * 12
    history: list[Message] = []
    for turn in range(60):  # about 14,000 tokens
        history += [
            UserMessage(content=f"Note {turn}: {notes}"),
            AssistantMessage(parts=(TextPart(text="Noted."),)),
        ]
    agent, events = _agent(
        server, "llamacpp:smollm2", **LEAN, agent_thought_mode="chat", context_strategy="slide"
    )
    result = agent.run_sync("When is the launch?", message_history=history)
    assert result.status == "completed" and result.stop_reason in STOP_REASONS
    assert server.statuses.count(400) == 1 and server.statuses[-1] == 200
    assert _kinds(events, "compaction")
    assert learned_window("llamacpp:smollm2") == server.n_ctx
    forget_learned()
