"""A run that failed on a full disk resumes at once when space returns (same server).

The store is a SQLite file on a small tmpfs mounted for the test (root only; skipped
otherwise), ``ponder serve`` a real subprocess: the disk fills while a run is under way,
its next checkpoint fails, and once the filler is deleted a resume must not wait for the
lease the failed run left behind (ten minutes) nor find the run shown two ways.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ponder.testing import FakeOpenAIServer

from .serve_process import AUTH, Serve, stepper


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full; the file."""
    filler = disk / f"filler-{uuid.uuid4().hex}"
    with filler.open("wb", buffering=0) as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 4096)
    return filler


def wait_status(serve: Serve, run_id: str, status: str, timeout: float = 60) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while (run := serve.run(run_id))["status"] != status:
        assert time.monotonic() < deadline, run
        time.sleep(0.1)
    return run


def test_a_run_failed_by_a_full_disk_resumes_once_space_returns(
    small_disk: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(stepper) as provider:
        serve = Serve(f"sqlite:///{small_disk / 'runs.sqlite3'}", provider.base_url, tmp_path)
        serve.env["STEP_SECONDS"] = "1"
        try:
            serve.start("--no-resume-runs")
            run_id = serve.post("through a full disk").json()["id"]
            serve.wait_steps(1)
            filler = fill(small_disk)
            failed = wait_status(serve, run_id, "failed")
            assert "full" in failed["error"], failed
            filler.unlink()
            resumed = httpx.post(
                f"{serve.url}/v1/runs/{run_id}/resume", json={"decision": None}, headers=AUTH
            )
            assert resumed.status_code == 200, resumed.text
            done = wait_status(serve, run_id, "completed", timeout=120)
            assert done["output"] == "finished through a full disk"
            assert serve.stop() == 0, serve.output()
        finally:
            serve.close()
    assert serve.stored_statuses([run_id]) == {run_id: "completed"}
