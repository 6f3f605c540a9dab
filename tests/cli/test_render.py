"""The live view rendered for a recorded event list into a fixed-size console."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from ponder.cli.render import LiveDisplay, render_view
from ponder.cli.view import RunView
from ponder.events import Event, ToolCallFailed, ToolCallStarted, event_from_dict

RECORDED = Path(__file__).with_name("demo_events.json")

FINAL = """\
ponder  run 0f3c9a2b · model scripted-demo · workflow react
✓ completed · round 5 · thought 4/4 · stop: answered
task Which is warmer right now, Lisbon or Oslo, and by how much?
╭─ reasoning · round 4 ────────────────────────────────────────────────────────╮
│ Everything needed is known; answer now.                                      │
╰──────────────────────────────────────────────────────────────────────────────╯
thinking  4/4 · 1 branch(es) · 1 revision(s)
├── 1/3 To compare the cities fairly I need both temperatures right now.
│   └── ⑂ branch feels-like
│       └── 4/4 Wind can make Oslo feel even colder, which only widens the gap.
├── 2/3 Oslo is far north, so it is probably the colder one; I will check.
│   (superseded)
└── 3/4 Checked: Oslo is -3 °C and Lisbon 17 °C, so the guess holds, now on
    data.  ↻ revises 2
tool calls
    tool                 arguments           result                       time
 ✓  current_temperature  {"city": "Lisbon"}  {"city": "Lisbon",           52 ms
                                             "celsius": 17.0}
 ✓  current_temperature  {"city": "Oslo"}    {"city": "Oslo", "celsius":  52 ms
                                             -3.0}
╭─ answer ─────────────────────────────────────────────────────────────────────╮
│ Lisbon is warmer: it is 17 °C there and -3 °C in Oslo, so Lisbon is 20       │
│ degrees Celsius warmer right now.                                            │
╰──────────────────────────────────────────────────────────────────────────────╯
tokens  in 8,379 · out 365 · total 8,744 · 9 request(s)
"""


def recorded() -> list[Event]:
    return [event_from_dict(item) for item in json.loads(RECORDED.read_text("utf-8"))]


def fold(events: list[Event]) -> RunView:
    view = RunView()
    for event in events:
        view.apply(event)
    return view


def text_of(view: RunView, width: int = 80) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(render_view(view))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def test_finished_run_renders_exactly() -> None:
    assert text_of(fold(recorded())) == FINAL


def test_mid_run_view_shows_running_calls_and_progress() -> None:
    events = recorded()
    started = [
        i
        for i, e in enumerate(events)
        if isinstance(e, ToolCallStarted) and e.name == "current_temperature"
    ]
    # stop right after the two temperature calls started, before either finished
    view = fold(events[: started[-1] + 1])
    text = text_of(view)
    assert "● running · round 2 · thought 2/3" in text
    assert "reasoning · round 2" in text and "Fetch both temperatures at once." in text
    assert ' …  current_temperature  {"city": "Oslo"}' in text
    assert "(superseded)" not in text and "branch" in text  # "0 branch(es)"
    assert "tokens  — (reported when the run ends)" in text
    assert "answer" not in text


def test_failed_call_and_failed_run_are_shown_in_red_text() -> None:
    events = recorded()[:3]
    events.append(
        ToolCallFailed(
            call_id="c9", name="lookup", error="no such city", status="timeout", duration=2.5
        )
    )
    events.append(
        event_from_dict(
            {"kind": "run_failed", "error": "model down", "error_type": "ModelHTTPError"}
        )
    )
    text = text_of(fold(events), width=60)
    assert " ⏱  lookup" in text and "no such city" in text and "2.50 s" in text
    assert "✗ failed" in text
    assert "error: ModelHTTPError: model down" in text


def test_narrow_terminal_still_shows_the_tree() -> None:
    text = text_of(fold(recorded()), width=40)
    assert "⑂ branch feels-like" in text
    assert "↻ revises 2" in text
    assert max(len(line) for line in text.splitlines()) <= 40


def test_live_display_prints_once_when_not_a_terminal() -> None:
    out = io.StringIO()
    console = Console(width=80, file=out, color_system=None, force_terminal=False)
    with LiveDisplay(console) as display:
        for event in recorded():
            display.update(event)
    printed = "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"
    assert printed == FINAL


def test_live_display_redraws_in_a_terminal() -> None:
    out = io.StringIO()
    console = Console(width=80, height=60, file=out, force_terminal=True, color_system=None)
    with LiveDisplay(console) as display:
        for event in recorded():
            display.update(event)
    written = out.getvalue()
    # the view was redrawn as events arrived: early states appear before the final one
    assert written.index("● running") < written.rindex("✓ completed")
    assert written.count("thinking  ") > 3


def test_usage_events_keep_a_running_token_total_and_resume_and_cancel_show() -> None:
    from ponder.events import RunCancelled, RunResumed, RunSuspended, UsageUpdated

    view = fold(recorded()[:3])
    view.apply(UsageUpdated(requests=1, input_tokens=900, output_tokens=40))
    assert "tokens  in 900 · out 40 · total 940 · 1 request(s)" in text_of(view)
    view.apply(UsageUpdated(requests=2, input_tokens=1900, output_tokens=90))
    assert "total 1,990 · 2 request(s)" in text_of(view)
    view.apply(RunSuspended(reason="approval", payload={"calls": []}))
    assert "⏸ suspended" in text_of(view)
    view.apply(RunResumed(run_id="abc12345ffff", pc=4))
    assert "● running" in text_of(view) and "resumed at pc 4" in text_of(view)
    view.apply(RunCancelled())
    assert "⊘ cancelled" in text_of(view)
