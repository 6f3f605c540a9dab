"""Scripts for the fake providers: what the next response is, and which fault to inject.

A script is a list of `FakeReply` (or dicts of its fields, or plain strings meaning a text
reply), or one function of the request JSON (history-driven). It is JSON-able, so the
subprocess form of a fake reads the same script from a file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = ["FakeReply", "FakeScript", "FakeToolCall", "RawReply", "ScriptSource", "load_script"]


class FakeToolCall(BaseModel):
    """One tool call in a fake reply; ``arguments`` is sent verbatim when it is a string."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str | dict[str, Any] = Field(default_factory=dict)
    id: str | None = None

    @property
    def argument_text(self) -> str:
        """The argument string as it goes on the wire."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class RawReply(BaseModel):
    """Bytes sent exactly as given, whatever the request asked for.

    ``events`` (SSE chunks, each sent as one HTTP chunk) make a chunked stream; otherwise
    ``body`` is sent whole. ``cut`` drops the connection instead of ending the response
    (a body then falls short of its ``content-length``). In JSON, bytes are base64.
    """

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    events: list[bytes] | None = None
    cut: bool = False


class FakeReply(BaseModel):
    """One scripted answer, or one fault instead of (or on top of) it.

    Faults: ``status`` (an error status, with ``retry_after`` seconds), ``delay`` (seconds
    before the first byte), ``chunk_delay`` (seconds between stream chunks after the first
    piece), ``drop_after`` (stream: drop the connection after that many events; plain:
    before the body), ``malformed`` (a broken JSON chunk / body), ``empty_choices`` (a
    well-formed answer without choices), ``raw`` (exact bytes instead of the answer).
    """

    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    reasoning: str | None = None
    reasoning_signature: str | None = None
    tool_calls: list[FakeToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int = 0
    model: str | None = None
    status: int | None = None
    error_message: str = "scripted error"
    retry_after: float | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    drop_after: int | None = None
    malformed: bool = False
    empty_choices: bool = False
    raw: RawReply | None = None

    def default_finish(self) -> str:
        """The finish reason to report (``tool_calls`` when there are calls)."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


ScriptItem: TypeAlias = FakeReply | dict[str, Any] | str
ScriptFunction: TypeAlias = Callable[[dict[str, Any]], ScriptItem]
ScriptSource: TypeAlias = Sequence[ScriptItem] | ScriptFunction
_ITEMS: TypeAdapter[list[FakeReply | str]] = TypeAdapter(list[FakeReply | str])


def to_reply(item: ScriptItem) -> FakeReply:
    """A `FakeReply` from a script item (a string is a text reply)."""
    if isinstance(item, FakeReply):
        return item
    if isinstance(item, str):
        return FakeReply(content=item)
    return FakeReply.model_validate(item)


class FakeScript:
    """Serves replies in order (thread-safe) and records every request body."""

    def __init__(self, source: ScriptSource) -> None:
        if callable(source):
            self._function: ScriptFunction | None = source
            self._items: list[FakeReply] = []
        else:
            self._function = None
            self._items = [to_reply(item) for item in source]
        self._lock = threading.Lock()
        self.served = 0
        self.requests: list[dict[str, Any]] = []

    def next_reply(
        self, body: dict[str, Any], seen: dict[str, Any] | None = None
    ) -> FakeReply | None:
        """The reply to ``body``, or ``None`` when the script is used up.

        ``seen`` is the request as the model sees it (a script function gets it).
        """
        with self._lock:
            self.requests.append(body)
            if self._function is not None:
                return to_reply(self._function(body if seen is None else seen))
            if self.served >= len(self._items):
                return None
            self.served += 1
            return self._items[self.served - 1]

    def record(self, body: dict[str, Any]) -> None:
        """Record a request that was answered without using the script (a refusal)."""
        with self._lock:
            self.requests.append(body)

    def exhausted_message(self) -> str:
        """The error text sent once the script is used up."""
        return f"fake script exhausted: all {len(self._items)} scripted replies were used"


def load_script(text: str) -> list[FakeReply]:
    """Read a JSON script: a list of replies, or ``{"replies": [...]}``."""
    data = json.loads(text)
    if isinstance(data, dict):
        data = data.get("replies")
    return [to_reply(item) for item in _ITEMS.validate_python(data)]


def split_text(text: str, pieces: int = 3) -> list[str]:
    """Split ``text`` into up to ``pieces`` non-empty chunks."""
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]
