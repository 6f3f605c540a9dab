"""The wheel as built for PyPI: its metadata, license, extras and package data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_wheel_declares_license_and_extras_and_ships_its_data(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("ponder-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    assert metadata["License-Expression"] == "MIT"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert {"server", "mcp", "postgres", "anthropic", "temporal", "all", "docs", "dev"} <= set(
        metadata.get_all("Provides-Extra") or []
    )
    unconditional = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    heavy = ("fastapi", "uvicorn", "sse-starlette", "psycopg", "anthropic", "temporalio", "mcp")
    assert [r for r in unconditional if r.split(">")[0].split("[")[0] in heavy] == []
    assert "ponder/py.typed" in names
    static = ROOT / "src" / "ponder" / "server" / "static"
    for path in static.iterdir():
        assert f"ponder/server/static/{path.name}" in names
