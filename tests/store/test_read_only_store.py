"""A SQLite store on a read-only mount opens read-only: its runs are listed and shown.

The store's folder is bind-mounted read-only (root only; skipped otherwise: as root a
``chmod`` stops nothing), so SQLite can create neither the journal nor the WAL index
beside the file. Writes are refused with a `StoreError` that says the store is read-only.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ponder.exceptions import StoreError
from ponder.store import SQLiteStore
from tests.cli.test_commands import one_line_error, ponder

from .test_store_errors import make_run


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A store holding one suspended run, seen through a read-only bind mount; its run id."""
    path, run_id = make_run(tmp_path / "rw")
    view = tmp_path / "ro"
    view.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    bound = subprocess.run(["mount", "--bind", "-o", "ro", str(path.parent), str(view)])
    if bound.returncode != 0:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
        yield view / path.name, run_id
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)


def test_a_store_on_a_read_only_mount_is_read_and_refuses_writes(
    read_only: tuple[Path, str],
) -> None:
    path, run_id = read_only

    async def use() -> None:
        store = SQLiteStore(path)
        try:
            assert store.is_read_only
            assert [r.run_id for r in await store.list_runs()] == [run_id]
            assert (await store.load(run_id)).record.status == "suspended"
            with pytest.raises(StoreError, match="read-only"):
                await store.set_status(run_id, "cancelled")
        finally:
            await store.close()

    asyncio.run(use())


def test_the_runs_commands_read_a_store_on_a_read_only_mount(read_only: tuple[Path, str]) -> None:
    path, run_id = read_only
    url = f"sqlite:///{path}"
    listed = ponder("runs", "list", "--store", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == [run_id]
    shown = ponder("runs", "show", run_id, "--store", url, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["status"] == "suspended"
    line = one_line_error(ponder("runs", "cancel", run_id, "--store", url))
    assert "read-only" in line and "bug in ponder" not in line, line
