"""``ponder serve`` and the official ``openai`` client: a ponder agent behind /v1/chat/completions.

Starts the server as a subprocess (``pip install 'ponder[server]'``), then talks to it
with the ``openai`` package, plainly and streamed. The viewer is at the printed address.

    python examples/server_openai_client.py --model openai:gpt-4o-mini   # OPENAI_API_KEY
    python examples/server_openai_client.py --offline    # the `scripted` model echoes
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from openai import OpenAI

from offline import arguments

OFFLINE_CONFIG = Path(__file__).with_name("no_tools.toml")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def ponder_serve(model: str, *options: str) -> Iterator[str]:
    """Run ``ponder serve`` until the block ends; yields its base URL.

    The server runs with ``--no-token`` (allowed on loopback only) so the example stays
    short; a real deployment keeps the token ``ponder serve`` prints and sends it as the
    client's API key.
    """
    port = free_port()
    command = [sys.executable, "-m", "ponder.cli.main", "serve", "--no-token", "--model", model]
    command += options
    server = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/v1/runs", timeout=1)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("ponder serve did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    """Ask once, then stream an answer, through the openai client."""
    options = arguments(__doc__ or "")
    # offline, the `scripted` model echoes the question, answered in one request (no tools)
    offline = ("scripted", "--config", str(OFFLINE_CONFIG))
    with ponder_serve(*offline) if options.offline else ponder_serve(options.model) as url:
        client = OpenAI(base_url=f"{url}/v1", api_key="no key needed on loopback")
        answer = client.chat.completions.create(
            model="ponder", messages=[{"role": "user", "content": "Say hello."}]
        )
        print(f"answer: {answer.choices[0].message.content}")
        stream = client.chat.completions.create(
            model="ponder",
            messages=[{"role": "user", "content": "Stream this back."}],
            stream=True,
        )
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
        print(f"streamed: {''.join(pieces)}")


if __name__ == "__main__":
    main()
