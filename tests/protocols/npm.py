"""Official JS clients from npm, installed once into ``.cache`` (tests skip without npm)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).with_name("node")
CACHE = ROOT / ".cache" / "npm-protocols"
PACKAGES = ("@ag-ui/client@1.0.0", "@ag-ui/core@1.0.0", "@a2a-js/sdk@1.3.0")


def node_folder() -> Path:
    """The folder holding the packages' ``node_modules``, installed once."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and node are not installed")
    marker = CACHE / "installed.json"
    if not marker.exists() or json.loads(marker.read_text()) != list(PACKAGES):
        CACHE.mkdir(parents=True, exist_ok=True)
        command = ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE)]
        subprocess.run([*command, *PACKAGES], check=True, timeout=300)
        marker.write_text(json.dumps(list(PACKAGES)))
    return CACHE


def run_script(name: str, *args: str) -> Any:
    """Run ``node/<name>`` beside the packages (so its imports resolve); its JSON report."""
    folder = node_folder()
    script = folder / name
    script.write_text((SCRIPTS / name).read_text())
    done = subprocess.run(
        ["node", str(script), *args], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
