"""``ponder serve --config FILE``: the settings API edits new runs and saves into that file."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.cli.test_commands import PONDER, ROOT, environment, free_port

CONFIG = "# mine\n[core.function_config]\nagent_tool_call_limit = 4  # rounds\n"


def test_serve_saves_edits_into_its_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    port = free_port()
    process = subprocess.Popen(
        [
            PONDER,
            "serve",
            "--port",
            str(port),
            "--no-token",
            "-m",
            "scripted",
            "--config",
            str(path),
        ],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1/config"
        deadline = time.monotonic() + 30
        while True:
            try:
                shown = httpx.get(url)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, process.stderr
                time.sleep(0.05)
        assert shown.json()["path"] == str(path)
        body = {"values": {"agent_tool_call_limit": 6, "tool_prediction": True}, "save": True}
        saved = httpx.patch(url, json=body)
        assert saved.status_code == 200, saved.text
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert path.read_text() == (
        "# mine\n[core.function_config]\nagent_tool_call_limit = 6  # rounds\n"
        "\n[core.builtin.react_config]\ntool_prediction = true\n"
    )
