"""LangGraph ``create_react_agent`` with a history-driven fake chat model.

``steps [sqlite] K...``; ``parallel``; ``failure``; ``checkpoint K...`` (bytes stored by
``AsyncSqliteSaver`` per run). The fake subclasses ``BaseChatModel`` (what LangChain's
docs recommend for custom models) and binds tools by returning itself.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import tempfile
import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.prebuilt import create_react_agent
from peer_harness import FANOUT, FINAL, add, emit, fail_tool, main, time_async

CONFIG: dict[str, Any] = {"recursion_limit": 100_000}


def _done(messages: list[BaseMessage]) -> int:
    for message in reversed(messages[-3:]):
        if isinstance(message, ToolMessage):
            return int(message.content)  # type: ignore[arg-type]
        if isinstance(message, HumanMessage):
            return 0
    return 0


class StepChatModel(BaseChatModel):
    """K calls to ``add``, then the answer; ``fanout`` calls in one turn when set."""

    steps: int = 0
    fanout: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "bench-steps"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StepChatModel:  # type: ignore[override]
        return self

    def _decide(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if self.fanout:
            if isinstance(last, ToolMessage):
                return AIMessage(content=FINAL)
            calls = [
                {"name": name, "args": {"a": i, "b": 1}, "id": f"c{i}", "type": "tool_call"}
                for i, name in enumerate(self.fanout)
            ]
            return AIMessage(content="", tool_calls=calls)
        done = _done(messages)
        if done >= self.steps:
            return AIMessage(content=FINAL)
        call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"c{done}", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._decide(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._generate(messages)


def _inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage(content="count")]}


def _check(result: dict[str, Any], expected: str = FINAL) -> None:
    if result["messages"][-1].content != expected:
        raise RuntimeError(f"unexpected end: {result['messages'][-1]!r}")


def steps(k: int, options: list[str]) -> float:
    if "sqlite" not in options:
        graph = create_react_agent(StepChatModel(steps=k), [add])

        async def once() -> None:
            _check(await graph.ainvoke(_inputs(), CONFIG))

        return time_async(once)
    path = os.path.join(tempfile.mkdtemp(), "lg.sqlite")
    holder: dict[str, Any] = {}

    async def once_saved() -> None:
        if "graph" not in holder:
            holder["cm"] = AsyncSqliteSaver.from_conn_string(path)
            saver = await holder["cm"].__aenter__()
            holder["graph"] = create_react_agent(StepChatModel(steps=k), [add], checkpointer=saver)
        config = {**CONFIG, "configurable": {"thread_id": uuid.uuid4().hex}}
        _check(await holder["graph"].ainvoke(_inputs(), config))

    return time_async(once_saved)


def parallel(options: list[str]) -> float:
    graph = create_react_agent(StepChatModel(fanout=("add",) * FANOUT), [add])

    async def once() -> None:
        result = await graph.ainvoke(_inputs(), CONFIG)
        _check(result)
        assert sum(isinstance(m, ToolMessage) for m in result["messages"]) == FANOUT

    return time_async(once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    graph = create_react_agent(StepChatModel(fanout=("add", "fail_tool", "add")), [add, fail_tool])
    try:
        result = asyncio.run(graph.ainvoke(_inputs(), CONFIG))
    except Exception as exc:  # the run itself failed
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    results = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    ok = [m for m in results if m.status != "error"]
    return {
        "survived": True,
        "kept": len(ok),
        "detail": "; ".join(str(m.content)[:60] for m in results),
    }


async def _stored_bytes(k: int) -> dict[str, float]:
    path = os.path.join(tempfile.mkdtemp(), "lg.sqlite")
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        graph = create_react_agent(StepChatModel(steps=k), [add], checkpointer=saver)
        config = {**CONFIG, "configurable": {"thread_id": "t"}}
        _check(await graph.ainvoke(_inputs(), config))
    with sqlite3.connect(path) as conn:
        (cp,) = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        ).fetchone()
        (wr,) = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()
    return {"bytes": float(cp + wr), "file": float(os.path.getsize(path))}


def checkpoint(ks: list[int]) -> None:
    emit({"bytes": {str(k): asyncio.run(_stored_bytes(k)) for k in ks}})


MODEL = StepChatModel()


def instantiate() -> Any:
    return create_react_agent(MODEL, [add])  # a compiled graph: LangGraph's agent object


if __name__ == "__main__":
    if sys.argv[1] == "checkpoint":
        checkpoint([int(a) for a in sys.argv[2:]])
    else:
        main(steps, parallel, failure, instantiate)
