"""The npm ``openai`` package drives the endpoint (a Node script; skipped without npm)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ponder.server.app import create_app

from .live import live_server
from .openai_agents import report_agent

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("node") / "tool_loop.mjs"
CACHE = ROOT / ".cache" / "npm-openai"
VERSION = "openai@4.104.0"


def node_client() -> Path:
    """The folder holding ``node_modules/openai``, installed once into the cache."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and node are not installed")
    marker = CACHE / "node_modules" / "openai" / "package.json"
    if not marker.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--silent",
                "--prefix",
                str(CACHE),
                VERSION,
            ],
            check=True,
            timeout=300,
        )
    return CACHE


def test_the_npm_openai_client_runs_a_client_side_tool_loop() -> None:
    folder = node_client()
    script = folder / SCRIPT.name  # beside node_modules, so `import "openai"` resolves
    script.write_text(SCRIPT.read_text())
    with live_server(create_app(report_agent())) as server:
        done = subprocess.run(
            ["node", str(script), f"{server.url}/v1"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["first"] == {
        "finish": "tool_calls",
        "name": "get_weather",
        "args": '{"city": "Paris"}',
    }
    assert seen["second"] == {"content": "In Paris: snow.", "sameRun": True}
    assert seen["streamed"] == {"names": ["get_weather"], "finish": "tool_calls"}
    assert seen["typed"] == {"city": "Paris", "sky": "unknown"}
    assert seen["refused"] == {"status": 400, "param": "n"}
    assert seen["models"] == ["ponder"]
