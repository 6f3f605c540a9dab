"""Test doubles that ship with ponder: fake provider servers speaking the real wire formats.

`FakeOpenAIServer` speaks ``/v1/chat/completions``; `FakeAnthropicServer` speaks
``/v1/messages``. Both serve a script of `FakeReply` items (or a function of the request
JSON) and inject faults. `ponder.models.ScriptedModel` is the in-process double.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ponder.testing.fake_openai import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeScript, FakeToolCall, load_script

if TYPE_CHECKING:
    from ponder.testing.fake_anthropic import FakeAnthropicServer

__all__ = [
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "FakeReply",
    "FakeScript",
    "FakeToolCall",
    "load_script",
]


def __getattr__(name: str) -> Any:
    if name == "FakeAnthropicServer":
        from ponder.testing.fake_anthropic import FakeAnthropicServer

        return FakeAnthropicServer
    raise AttributeError(f"module 'ponder.testing' has no attribute {name!r}")
