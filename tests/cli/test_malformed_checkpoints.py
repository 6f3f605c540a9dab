"""``ponder runs show`` and ``resume`` on a checkpoint changed behind ponder's back: one line
naming the run and the bad field, never a traceback. The store is SQLite, damaged with SQL."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_commands import one_line_error, ponder
from tests.store.test_store_errors import make_run

SUSPENSION = "$.vm.suspension"
DAMAGES: dict[str, tuple[str, str]] = {
    "garbage JSON": ("UPDATE ponder_runs SET header = '{not json'", "header is not valid JSON"),
    "unknown status": ("UPDATE ponder_runs SET status = 'paused'", "status 'paused'"),
    "missing status": ("UPDATE ponder_runs SET status = ''", "has no status"),
    "usage a string": (
        "UPDATE ponder_runs SET header = json_set(header, '$.vm.state.usage', 'lots')",
        "wrong shape at vm.state.usage",
    ),
    "unknown suspension": (
        f"UPDATE ponder_runs SET header = json_set(header, '{SUSPENSION}[0]', 'sleep')",
        "wrong shape at vm.suspension.0",
    ),
    "suspension a number": (
        f"UPDATE ponder_runs SET header = json_set(header, '{SUSPENSION}', 7)",
        "wrong shape at vm.suspension",
    ),
}
"""Damage to a stored suspended run: the SQL, and what the error names."""


def damaged(tmp_path: Path, damage: str) -> tuple[str, str, str]:
    """A store URL holding one suspended run damaged by ``damage``; the run id; the fragment."""
    path, run_id = make_run(tmp_path)
    statement, fragment = DAMAGES[damage]
    with sqlite3.connect(path) as db:
        db.execute(statement)
    return f"sqlite:///{path}", run_id, fragment


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_runs_show_names_the_run_and_the_bad_field(tmp_path: Path, damage: str) -> None:
    url, run_id, fragment = damaged(tmp_path, damage)
    for extra in ([], ["--json"]):
        shown = ponder("runs", "show", run_id, "--store", url, *extra)
        line = one_line_error(shown)
        assert shown.returncode != 0 and shown.stdout == "", shown.stdout
        assert f"run {run_id!r}" in line and fragment in line, line
        assert "bug in ponder" not in line, line


def test_runs_resume_of_a_malformed_checkpoint_is_refused_before_any_agent_runs(
    tmp_path: Path,
) -> None:
    url, run_id, fragment = damaged(tmp_path, "usage a string")
    resumed = ponder("runs", "resume", run_id, "--store", url, "--approve", "--model", "x:y")
    line = one_line_error(resumed)
    assert fragment in line and "bug in ponder" not in line, line


def test_a_listing_still_shows_the_malformed_run(tmp_path: Path) -> None:
    url, run_id, _ = damaged(tmp_path, "usage a string")
    listed = ponder("runs", "list", "--store", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == [run_id]
