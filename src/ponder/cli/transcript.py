"""Drawing stored runs: the runs table, one run's conversation, and pending approvals."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ponder.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.store.base import RunRecord

__all__ = [
    "answer_example",
    "conversation",
    "pending_approval",
    "questions_view",
    "resume_command",
    "run_header",
    "runs_table",
]

_STATUS_STYLES = {
    "running": "yellow",
    "completed": "green",
    "suspended": "cyan",
    "failed": "red",
    "cancelled": "red",
}


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def runs_table(records: Sequence[RunRecord]) -> Table:
    """Stored runs, newest first: id, status, last update, messages, task."""
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("run id", "status", "updated", "msgs", "task"):
        table.add_column(column, no_wrap=column != "task")
    for record in records:
        style = _STATUS_STYLES.get(record.status, "")
        table.add_row(
            record.run_id,
            Text(record.status, style=style),
            _when(record.updated),
            str(record.messages),
            _shorten(record.prompt, 60),
        )
    return table


def run_header(record: RunRecord) -> RenderableType:
    """The run's id, status, times, task and message count."""
    status = Text(record.status, style=f"bold {_STATUS_STYLES.get(record.status, '')}")
    return Group(
        Text.assemble(("run ", "bold"), record.run_id, "  ", status),
        Text(f"created {_when(record.created)} · updated {_when(record.updated)}", style="dim"),
        Text.assemble(("task ", "dim"), record.prompt),
        Text(f"messages {record.messages}"),
    )


def _assistant(message: AssistantMessage) -> list[Text]:
    lines: list[Text] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():
            lines.append(Text.assemble(("assistant  ", "bold green"), part.text))
        elif isinstance(part, ReasoningPart) and part.text.strip():
            lines.append(Text.assemble(("reasoning  ", "dim"), _shorten(part.text, 300)))
        elif isinstance(part, ToolCallPart):
            call = f"{part.name}({_arguments(part.args or part.arguments)})  [{part.id}]"
            lines.append(Text.assemble(("→ call     ", "bold magenta"), call))
    return lines


def _line(message: Message) -> list[Text]:
    if isinstance(message, SystemMessage):
        return [Text.assemble(("system     ", "dim"), _shorten(message.content, 200))]
    if isinstance(message, UserMessage):
        return [Text.assemble(("user       ", "bold blue"), message.content)]
    if isinstance(message, ToolMessage):
        mark = ("✗ ", "red") if message.is_error else ("← ", "green")
        body = _shorten(message.content, 400)
        return [Text.assemble(mark, (f"{message.name} [{message.call_id}]  ", "bold"), body)]
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    return []


def conversation(messages: Sequence[Message]) -> RenderableType:
    """The ledger, one line per message part (system prompts and reasoning shortened)."""
    lines = [line for message in messages for line in _line(message)]
    return Group(Text("conversation", style="bold underline"), *lines)


def pending_approval(calls: Sequence[dict[str, Any]]) -> RenderableType:
    """The calls a suspended run waits on, one per line."""
    lines = [
        Text(f"  {c.get('id')}  {c.get('name')}({_arguments(c.get('arguments'))})") for c in calls
    ]
    return Group(Text("waiting for approval", style="bold cyan"), *lines)


def questions_view(questions: Sequence[dict[str, Any]]) -> RenderableType:
    """The MCP servers' questions a suspended run waits on, with what they ask for."""
    lines: list[Text] = []
    for q in questions:
        lines.append(Text(f"  {q.get('id')}  [{q.get('server')}] {q.get('message')}"))
        if q.get("mode") == "url":
            lines.append(Text(f"      open: {q.get('url')}"))
        else:
            schema = q.get("schema") or {}
            required = set(schema.get("required") or ())
            for key, spec in dict(schema.get("properties") or {}).items():
                kind = spec.get("type", "") if isinstance(spec, dict) else ""
                lines.append(Text(f"      {key}: {kind}{'' if key in required else ' (optional)'}"))
    return Group(Text("waiting for input", style="bold cyan"), *lines)


def answer_example(questions: Sequence[dict[str, Any]]) -> str:
    """A ``--answer`` JSON that shows the shape of the answers these questions take."""

    def one(q: dict[str, Any]) -> dict[str, Any]:
        if q.get("mode") == "url":
            return {"action": "accept"}
        props = dict((q.get("schema") or {}).get("properties") or {})
        return {"action": "accept", "content": {k: f"<{_kind(v)}>" for k, v in props.items()}}

    if len(questions) == 1:
        return json.dumps(one(questions[0]))
    return json.dumps({str(q.get("id")): one(q) for q in questions})


def _kind(spec: Any) -> str:
    return str(spec.get("type", "value")) if isinstance(spec, dict) else "value"


def resume_command(run_id: str, store: str, agent_arguments: Sequence[str], decision: str) -> str:
    """The ``ponder runs resume`` command line that continues this run."""
    words = ["ponder", "runs", "resume", run_id, "--store", store, *agent_arguments]
    words += [decision] if decision else []
    return " ".join(shlex.quote(w) for w in words)
