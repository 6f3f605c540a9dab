"""The message ledger: typed messages and the invariant that every tool call has one result.

A conversation is a list of messages. Assistant messages carry parts (text, provider
reasoning, tool calls); each tool call is answered by exactly one ``ToolMessage``.
``Ledger`` keeps the list append-only and checks the pairing incrementally, so checking it
before a model request costs O(1), not a scan of the history. It keeps the messages in a
tuple, replaced on every append, so a model request sends that tuple as it is: a run waiting
for its model holds one sequence of its messages, not two.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ponder.exceptions import LedgerError
from ponder.jsontext import json_encoder
from ponder.media import Attachment
from ponder.scrub import is_clean, scrub_text, scrub_value
from ponder.shared_fields import share_fields_set

__all__ = [
    "AssistantMessage",
    "AssistantPart",
    "Ledger",
    "Message",
    "PartsView",
    "ReasoningPart",
    "SystemMessage",
    "TextPart",
    "ToolCallPart",
    "ToolMessage",
    "UserMessage",
    "ensure_sendable",
    "is_clean",
    "messages_from_json",
    "messages_to_json",
    "parse_arguments",
    "scrub_parts",
    "scrub_text",
    "scrub_value",
    "unique_call_ids",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """Visible text written by the model."""

    kind: Literal["text"] = "text"
    text: str


class ReasoningPart(_Frozen):
    """Provider reasoning ("thinking") that some providers require to be sent back.

    ``signature`` (Anthropic) or ``redacted`` data must be replayed verbatim.
    """

    kind: Literal["reasoning"] = "reasoning"
    text: str
    signature: str | None = None
    redacted: str | None = None
    provider: str | None = None


class ToolCallPart(_Frozen):
    """One tool call: the raw argument string as sent, and its parse (or why it failed).

    ``id`` is unique within its response; ``provider_id`` keeps the provider's own id
    when ponder had to renumber a repeated or missing one (see `unique_call_ids`).
    """

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str = "{}"
    args: dict[str, Any] | None = None
    args_error: str | None = None
    provider_id: str | None = None

    @classmethod
    def from_raw(cls, id: str, name: str, arguments: str) -> ToolCallPart:
        """Build a call from the provider's raw argument text, keeping a parse error."""
        args, error = parse_arguments(arguments)
        return cls(id=id, name=name, arguments=arguments, args=args, args_error=error)

    @classmethod
    def from_args(cls, id: str, name: str, args: dict[str, Any]) -> ToolCallPart:
        """Build a call from already-parsed arguments."""
        return cls(id=id, name=name, arguments=_JSON(args), args=args)


AssistantPart = Annotated[TextPart | ReasoningPart | ToolCallPart, Field(discriminator="kind")]


_JSON = json_encoder()


def _is_clean_part(part: BaseModel) -> bool:
    for value in part.__dict__.values():  # the field names are ASCII
        if isinstance(value, str):
            if not value.isascii() and not is_clean(value):
                return False
        elif value is not None and not is_clean(value):
            return False
    return True


def scrub_parts(parts: tuple[AssistantPart, ...]) -> tuple[AssistantPart, ...]:
    """``parts`` without lone surrogates in text, reasoning or calls; as is if clean."""
    for part in parts:
        if not _is_clean_part(part):
            break
    else:
        return parts
    fixed: list[AssistantPart] = []
    for part in parts:
        dumped = part.model_dump()
        clean = scrub_value(dumped)
        fixed.append(part if clean == dumped else type(part).model_validate(clean))
    return tuple(fixed)


def unique_call_ids(parts: tuple[AssistantPart, ...]) -> tuple[AssistantPart, ...]:
    """``parts`` with every tool call id unique: a repeated id gets a new one.

    The first call keeps a repeated id; later ones become ``<id>_2``, ``<id>_3``, ...
    (letters, digits, ``_`` and ``-`` only, as providers require) with ``provider_id``
    set to what the provider sent. Empty ids (not assigned yet) are left alone.
    """
    if len(parts) < 2:
        return parts
    calls = [p.id for p in parts if isinstance(p, ToolCallPart) and p.id]
    taken = set(calls)
    if len(taken) == len(calls):
        return parts
    seen: set[str] = set()
    fixed: list[AssistantPart] = []
    for part in parts:
        if isinstance(part, ToolCallPart) and part.id in seen:
            fresh = _fresh_id(part.id, taken)
            taken.add(fresh)
            part = part.model_copy(update={"id": fresh, "provider_id": part.id})
        if isinstance(part, ToolCallPart) and part.id:
            seen.add(part.id)
        fixed.append(part)
    return tuple(fixed)


def _fresh_id(base: str, taken: set[str]) -> str:
    number = 2
    while f"{base}_{number}" in taken:
        number += 1
    return f"{base}_{number}"


class SystemMessage(_Frozen):
    """Instructions for the model."""

    kind: Literal["system"] = "system"
    content: str


class UserMessage(_Frozen):
    """A message from the user (or injected by the runtime on the user's side)."""

    kind: Literal["user"] = "user"
    content: str
    name: str | None = None
    attachments: tuple[Attachment, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Images and files sent with the text (see `ponder.media`)."""


class PartsView:
    """Readers over ``parts`` shared by assistant messages and model responses."""

    parts: tuple[AssistantPart, ...]

    @property
    def text(self) -> str:
        """The concatenated visible text."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def reasoning(self) -> str:
        """The concatenated provider reasoning text."""
        return "".join(p.text for p in self.parts if isinstance(p, ReasoningPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        """The tool calls, in the order the model made them."""
        return tuple(p for p in self.parts if isinstance(p, ToolCallPart))


class AssistantMessage(PartsView, _Frozen):
    """One model response: its parts in order, plus provider fields to replay verbatim."""

    kind: Literal["assistant"] = "assistant"
    parts: tuple[AssistantPart, ...] = ()
    model_name: str | None = None
    provider_extras: dict[str, Any] = Field(default_factory=dict)


class ToolMessage(_Frozen):
    """The one result of one tool call: what the model sees, and data for a UI."""

    kind: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: str
    data: Any = None
    is_error: bool = False
    attachments: tuple[Attachment, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Images a tool returned (`ToolResult.attachments`)."""


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="kind")
]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def messages_to_json(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Turn messages into JSON-able dicts."""
    return [m.model_dump(mode="json", exclude_defaults=False) for m in messages]


def messages_from_json(data: Any) -> list[Message]:
    """Read messages written by ``messages_to_json`` (raises ``pydantic.ValidationError``)."""
    return _MESSAGES.validate_python(data)


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse a tool call's argument text strictly: a JSON object or an error message.

    Lenient repair (code fences, trailing commas) belongs to the tool layer, which knows
    the schema; here a parse failure is recorded, never raised.
    """
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON: {exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def ensure_sendable(messages: Iterable[Message]) -> None:
    """Raise ``LedgerError`` (naming the call id) unless ``messages`` may be sent to a model.

    Every tool call must have exactly one result, placed after its assistant message and
    before any other message. A `Ledger` answers in O(1); a plain list is checked in O(n).
    """
    if isinstance(messages, Ledger):
        messages.ensure_sendable()
    else:
        Ledger(messages).ensure_sendable()


class Ledger:
    """An append-only conversation that keeps tool calls paired with their results.

    Appending checks the pairing incrementally: a result must answer an open call of the
    latest assistant message, and no other message may be appended while calls are open.
    """

    __slots__ = ("_messages", "_open_calls", "_open_index", "generation")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: tuple[Message, ...] = ()
        self._open_calls: dict[str, str] = {}
        self._open_index = -1
        self.generation = 0
        """Incremented whenever the conversation is replaced rather than appended to."""
        self.extend(messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages now: an immutable snapshot (a later append makes a new tuple)."""
        return self._messages

    @property
    def open_calls(self) -> dict[str, str]:
        """Calls of the latest assistant message that have no result yet (id → name)."""
        return dict(self._open_calls)

    @property
    def assistant_index(self) -> int:
        """The index of the latest assistant message (-1 if none): where open calls live."""
        return self._open_index

    def append(self, message: Message) -> None:
        """Append one message, refusing any that would break the pairing."""
        if isinstance(message, ToolMessage):
            self._check_result(message)
            del self._open_calls[message.call_id]
        else:
            self._check_no_open_calls(message.kind)
            if isinstance(message, AssistantMessage):
                self._open_calls = self._calls_of(message)
                self._open_index = len(self._messages)
                for part in message.parts:
                    share_fields_set(part)
        share_fields_set(message)  # messages are frozen: one set per field names will do
        self._messages += (message,)

    def extend(self, messages: Iterable[Message]) -> None:
        """Append several messages in order."""
        for message in messages:
            self.append(message)

    def ensure_sendable(self) -> None:
        """Raise ``LedgerError`` unless every tool call has its result."""
        if self._open_calls:
            ids = ", ".join(sorted(self._open_calls))
            raise LedgerError(f"tool call(s) without a result: {ids}")

    def replace(self, messages: Iterable[Message]) -> None:
        """Replace the whole conversation (compaction); the new one must be valid too."""
        fresh = Ledger(messages)
        self._messages, self._open_calls = fresh._messages, fresh._open_calls
        self._open_index = fresh._open_index
        self.generation += 1

    def to_json(self) -> list[dict[str, Any]]:
        """The messages as JSON-able dicts."""
        return messages_to_json(self._messages)

    @classmethod
    def from_json(cls, data: Any) -> Ledger:
        """Rebuild a ledger from ``to_json`` output, re-checking its invariants."""
        return cls(messages_from_json(data))

    def _check_result(self, message: ToolMessage) -> None:
        name = self._open_calls.get(message.call_id)
        if name is None:
            raise LedgerError(
                f"tool result for call {message.call_id!r} answers no open call "
                "(unknown id, or already answered)"
            )
        if message.name != name:
            raise LedgerError(
                f"tool result for call {message.call_id!r} names tool {message.name!r}, "
                f"but the call was to {name!r}"
            )

    def _check_no_open_calls(self, kind: str) -> None:
        if self._open_calls:
            ids = ", ".join(sorted(self._open_calls))
            raise LedgerError(f"cannot append a {kind} message: tool call(s) {ids} have no result")

    @staticmethod
    def _calls_of(message: AssistantMessage) -> dict[str, str]:
        calls: dict[str, str] = {}
        for call in message.tool_calls:
            if call.id in calls:
                raise LedgerError(f"assistant message repeats tool call id {call.id!r}")
            calls[call.id] = call.name
        return calls
