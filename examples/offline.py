"""Shared by the examples: ``--offline`` plays the model with ponder's fake OpenAI server.

`FakeOpenAIServer` (from `ponder.testing`) is a real HTTP server speaking the OpenAI wire
format; it answers from a script, so an example runs with no key and no network.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

__all__ = ["arguments", "call", "provider"]


def arguments(description: str, default_model: str = "openai:gpt-4o-mini") -> argparse.Namespace:
    """``--offline``, ``--model`` and ``--base-url``, the options every example takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--offline", action="store_true", help="play the model with a script")
    parser.add_argument("--model", default=default_model, help="a ponder model string")
    parser.add_argument("--base-url", default=None, help="the model server's URL")
    return parser.parse_args()


def call(name: str, **args: Any) -> FakeReply:
    """A scripted reply that calls one tool."""
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=args)])


@contextmanager
def provider(options: argparse.Namespace, script: Sequence[FakeReply]) -> Iterator[dict[str, Any]]:
    """The agent's model settings: the real provider, or with ``--offline`` the script."""
    if not options.offline:
        yield {"model": options.model, "base_url": options.base_url}
        return
    with FakeOpenAIServer(list(script)) as server:
        yield {"model": "openai:gpt-4o-mini", "base_url": server.base_url, "api_key": "offline"}
