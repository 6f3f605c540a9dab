"""A run killed between taking its lease and its first checkpoint: listed, shown, ended."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.cli.test_commands import one_line_error, ponder

from .test_crash_resume import store_url, worker


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_run_killed_before_its_first_checkpoint_is_listed_shown_and_marked_failed(
    backend: str, tmp_path: Path
) -> None:
    url, run_id = store_url(backend, tmp_path), f"orphan-{uuid.uuid4().hex}"
    code, _ = worker(url, run_id, tmp_path / "calls.log", "start", crash=0)
    assert code == -9
    listed = ponder("runs", "list", "--store", url, "--json", "--limit", "1000")
    assert listed.returncode == 0, listed.stderr
    found = [r for r in json.loads(listed.stdout)["runs"] if r["id"] == run_id]
    assert [r["status"] for r in found] == ["running"]
    shown = ponder("runs", "show", run_id, "--store", url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["conversation"] == []
    assert "no checkpoint" in ponder("runs", "show", run_id, "--store", url).stdout
    resumed = ponder("runs", "resume", run_id, "--store", url, "--model", "scripted")
    assert resumed.returncode == 1
    line = one_line_error(resumed)
    assert "before its first checkpoint" in line and "bug in ponder" not in line
    again = json.loads(ponder("runs", "show", run_id, "--store", url, "--json").stdout)
    assert again["status"] == "failed"
