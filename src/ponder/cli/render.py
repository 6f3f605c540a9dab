"""Drawing a `RunView` with rich: header, reasoning, thinking tree, plan, tools, answer, tokens.

`render_view` is a pure function of the view, so a test can render a recorded event list
into a fixed-width console and read the text. `LiveDisplay` redraws it as events arrive.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ponder.cli.view import RunView, ThoughtView, ToolCallView
from ponder.events import Event
from ponder.status import CallStatus, RunStatus

__all__ = ["LiveDisplay", "render_view"]

_STATUS_MARKS: dict[CallStatus | Literal["running"], tuple[str, str]] = {
    "running": ("…", "yellow"),
    "ok": ("✓", "green"),
    "error": ("✗", "red"),
    "timeout": ("⏱", "red"),
    "invalid_arguments": ("✗", "red"),
    "cancelled": ("⊘", "red"),
    "unknown_tool": ("?", "red"),
}
_RUN_MARKS: dict[RunStatus, tuple[str, str]] = {
    "running": ("●", "yellow"),
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
    "suspended": ("⏸", "cyan"),
    "cancelled": ("⊘", "red"),
    "interrupted": ("⏸", "yellow"),
}
_PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
_VIEW_TOOLS = frozenset({"sequential_thinking", "todo_write"})


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _status_line(view: RunView) -> Text:
    mark, style = _RUN_MARKS[view.status]
    line = Text.assemble((f"{mark} {view.status}", f"bold {style}"))
    pieces = []
    if view.round:
        pieces.append(f"round {view.round}")
    step = view.current_step
    if step is not None:
        pieces.append(f"step {step.index}/{step.total}")
    number, total = view.thought_progress
    if total:
        pieces.append(f"thought {number}/{total}")
    if view.stop_reason:
        pieces.append(f"stop: {view.stop_reason}")
    for piece in pieces:
        line.append(f" · {piece}")
    return line


def _header(view: RunView) -> RenderableType:
    title = Text.assemble(("ponder", "bold"), f"  run {view.run_id[:8] or '—'}")
    if view.model:
        title.append(f" · model {view.model}")
    if view.workflow:
        title.append(f" · workflow {view.workflow}")
    lines: list[RenderableType] = [title, _status_line(view)]
    if view.prompt:
        lines.append(Text.assemble(("task ", "dim"), _shorten(view.prompt, 200)))
    return Group(*lines)


def _reasoning(view: RunView) -> RenderableType:
    round_no, summary = view.summaries[-1]
    body = Text(summary)
    return Panel(body, title=f"reasoning · round {round_no}", title_align="left")


def _thought_label(thought: ThoughtView) -> Text:
    label = Text(f"{thought.number}/{thought.total} ", style="bold")
    style = "dim strike" if thought.superseded_by is not None else ""
    label.append(_shorten(thought.text, 300), style=style)
    if thought.revises is not None:
        verb = "amends" if thought.revision_type == "amend" else "revises"
        label.append(f"  ↻ {verb} {thought.revises}", style="magenta")
    if thought.superseded_by is not None:
        label.append("  (superseded)", style="dim")
    if thought.warnings:
        label.append(f"  ⚠ {len(thought.warnings)} warning(s)", style="yellow")
    return label


def _thinking_tree(view: RunView) -> Tree:
    number, total = view.thought_progress
    branches = view.branch_ids()
    revisions = sum(t.revises is not None for t in view.thoughts)
    title = Text.assemble(("thinking", "bold cyan"), f"  {number}/{total}")
    title.append(f" · {len(branches)} branch(es) · {revisions} revision(s)", style="dim")
    root = Tree(title)
    anchors: dict[int, Tree] = {}
    for thought in view.main_line():
        anchors.setdefault(thought.number, root.add(_thought_label(thought)))
    for branch_id in branches:
        thoughts = view.branch(branch_id)
        parent = anchors.get(thoughts[0].branch_from or -1, root)
        node = parent.add(Text(f"⑂ branch {branch_id}", style="cyan"))
        for thought in thoughts:
            node.add(_thought_label(thought))
    return root


def _plan(plan: dict[str, Any]) -> RenderableType:
    steps = plan.get("steps") if isinstance(plan.get("steps"), list) else []
    title = f"plan · {plan.get('completed', 0)}/{plan.get('total', len(steps or []))} done"
    lines = [Text(str(plan.get("task", "")), style="bold")]
    for step in steps or []:
        if isinstance(step, dict):
            mark = _PLAN_MARKS.get(str(step.get("status")), "[?]")
            lines.append(Text(f"{mark} {step.get('description', '')}"))
    return Panel(Group(*lines), title=title, title_align="left")


def _steps(view: RunView) -> RenderableType:
    table = Table(title="steps", title_justify="left", show_header=False, box=None)
    for step in view.steps:
        summary = f" — {_shorten(step.summary, 60)}" if step.summary else ""
        table.add_row(
            Text(f"{step.index}/{step.total}"),
            Text(f"{step.description}{summary}"),
            Text(step.status),
        )
    return table


def _call_row(call: ToolCallView) -> tuple[Text, Text, Text, Text, Text]:
    mark, style = _STATUS_MARKS.get(call.status, ("?", "red"))
    result = Text(_shorten(call.output, 60), style="red" if style == "red" else "")
    return (
        Text(mark, style=style),
        Text(call.name),
        Text(_shorten(_arguments(call.arguments), 48)),
        result,
        Text(_duration(call.duration)),
    )


def _calls(calls: list[ToolCallView]) -> RenderableType:
    table = Table(title="tool calls", title_justify="left", expand=False, box=None)
    for column in ("", "tool", "arguments", "result", "time"):
        table.add_column(column, overflow="fold")
    for call in calls:
        table.add_row(*_call_row(call))
    return table


def _usage(view: RunView) -> Text:
    usage = view.usage
    if not usage:
        if view.status == "running":
            return Text("tokens  — (reported when the run ends)", style="dim")
        return Text("tokens  — (none reported)", style="dim")
    total = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    cost = "" if view.cost is None else f" · ${view.cost:.4f}"
    cached = usage.get("cached_input_tokens", 0)
    read = f" ({cached:,} cached)" if cached else ""
    return Text(
        f"tokens  in {usage.get('input_tokens', 0):,}{read} · out {usage.get('output_tokens', 0):,}"
        f" · total {total:,} · {usage.get('requests', 0)} request(s){cost}",
        style="dim",
    )


def render_view(view: RunView, *, show_error: bool = True) -> RenderableType:
    """The whole display for ``view``.

    ``show_error=False`` leaves out the error line, for a failure reported on its own.
    """
    parts: list[RenderableType] = [_header(view)]
    if view.summaries:
        parts.append(_reasoning(view))
    if view.thoughts:
        parts.append(_thinking_tree(view))
    if view.plan:
        parts.append(_plan(view.plan))
    if view.steps:
        parts.append(_steps(view))
    calls = [c for c in view.calls.values() if c.name not in _VIEW_TOOLS or c.status != "ok"]
    if calls:
        parts.append(_calls(calls))
    parts.extend(Text(n, style="cyan") for n in view.notices[-5:])
    if view.answer:
        parts.append(Panel(Text(view.answer), title="answer", title_align="left"))
    if view.error and show_error:
        parts.append(Text(f"error: {view.error}", style="bold red"))
    parts.append(_usage(view))
    return Group(*parts)


class LiveDisplay:
    """Redraws a `RunView` in the terminal as events arrive; prints it once when not a TTY."""

    def __init__(self, console: Console, view: RunView | None = None) -> None:
        self.console = console
        self.view = view or RunView()
        self._live = Live(
            console=console,
            auto_refresh=False,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def __enter__(self) -> LiveDisplay:
        if self.console.is_terminal:
            self._live.start()
        return self

    def update(self, event: Event) -> None:
        """Apply ``event`` and redraw."""
        self.view.apply(event)
        if self.console.is_terminal:
            self._live.update(render_view(self.view), refresh=True)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # a failure that leaves the block is printed once, by the command, with its hint
        final = render_view(self.view, show_error=exc is None)
        if self.console.is_terminal:
            self._live.update(final, refresh=True)
            self._live.stop()
        else:
            self.console.print(final)
