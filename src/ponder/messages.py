"""The message ledger: typed messages and the invariant that every tool call has one result.

A conversation is a list of messages. Assistant messages carry parts (text, provider
reasoning, tool calls); each tool call is answered by exactly one ``ToolMessage``.
``Ledger`` keeps the list append-only and checks the pairing incrementally, so checking it
before a model request costs O(1), not a scan of the history.

A ledger keeps each message as a record the cyclic collector does not track: a tuple of
strings, numbers and ``None`` (nested tuples for parts and attachments; a tool call's
arguments as their JSON text only; other JSON values as their text). Thousands of runs
waiting for their models keep their conversations without adding to what every full
collection walks. ``ledger[i]``, iteration and `Ledger.messages` build typed views, equal
to the messages appended, on demand; `Ledger.messages` is a `MessageSeq` over the records,
which a model request sends as it is, building only the views its model reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Annotated, Any, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ponder.exceptions import LedgerError
from ponder.jsontext import json_encoder
from ponder.media import Attachment, File, Image
from ponder.scrub import is_clean, scrub_text, scrub_value
from ponder.shared_fields import SharedFieldsSet, share_fields_set, shared_fields_set

__all__ = [
    "AssistantMessage",
    "AssistantPart",
    "Ledger",
    "Message",
    "MessageSeq",
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


# -- records: how a ledger keeps a message ------------------------------------------------
#
# A record is one flat, exact tuple of str, int, float, bool and None, which CPython's
# collector untracks at its first collection (a nested tuple would take one collection per
# level). Its first item names the kind (``_SYSTEM`` ...), its second is a bit mask of the
# fields the message was built with (``model_fields_set``); then come the fields in a fixed
# order, ending with the message's parts or attachments, one segment each:
#
#   system     _SYSTEM, mask, content
#   user       _USER, mask, content, name, *attachments
#   assistant  _ASSISTANT, mask, model_name, extras, *parts
#   tool       _TOOL, mask, call_id, name, content, data is JSON text, data, is_error,
#              *attachments
#   parts      _TEXT, mask, text | _REASONING, mask, text, signature, redacted, provider |
#              _CALL, mask, id, name, arguments, args_error, provider_id, args...
#   attachment _IMAGE or _FILE, mask, media_type, data, path, url, name
#
# A part or attachment of another class is the segment ``_KEPT, object``. A tool call's
# ``args`` ends its segment: ``n, key, value, ...`` for a dict of n strings, numbers, bools
# or ``None`` (most calls: rebuilt without parsing); else ``""`` when it is exactly what
# ``arguments`` parses to, the JSON text that reads back as exactly ``args``, or the dict
# itself; ``None`` is ``None``.
# ``provider_extras`` is ``None`` when empty, else its JSON text, else the dict itself;
# ``ToolMessage.data`` is its JSON text (flagged) or the value itself. A value JSON cannot
# reproduce is kept as it is: the record is then merely tracked. A message of another class
# (a subclass), or one built around validation with values of other types, is kept as is.

_SYSTEM, _USER, _ASSISTANT, _TOOL = 0, 1, 2, 3
_KEPT, _TEXT, _REASONING, _CALL = -1, 0, 1, 2
_IMAGE, _FILE = 0, 1

_loads = json.loads
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

M = TypeVar("M", bound=BaseModel)
_BITS: dict[type[BaseModel], dict[str, int]] = {}
"""Per model class: the bit of each field in a record's fields mask."""
_FIELDS_SETS: dict[type[BaseModel], dict[int, SharedFieldsSet]] = {}
"""Per model class: the shared fields set of each mask a record holds."""
_MASKS: dict[int, int] = {}
"""The mask of each shared fields set, by its id (shared sets live as long as the process)."""


def _mask(model: BaseModel) -> int:
    fields = model.__pydantic_fields_set__
    shared = type(fields) is SharedFieldsSet
    if shared:
        found = _MASKS.get(id(fields))
        if found is not None:
            return found
    cls = type(model)
    bits = _BITS.get(cls)
    if bits is None:
        bits = _BITS[cls] = {name: 1 << i for i, name in enumerate(cls.model_fields)}
    mask = 0
    for name in fields:
        mask |= bits[name]
    if shared:
        _MASKS[id(fields)] = mask
    return mask


def _fields_set(cls: type[BaseModel], mask: int) -> SharedFieldsSet:
    sets = _FIELDS_SETS.get(cls)
    if sets is None:
        sets = _FIELDS_SETS[cls] = {}
    found = sets.get(mask)
    if found is None:
        names = [name for i, name in enumerate(cls.model_fields) if mask >> i & 1]
        found = sets[mask] = shared_fields_set(names)
    return found


_new = object.__new__
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


def _built(cls: type[M], values: dict[str, Any], mask: int) -> M:
    """A view: `ponder.shared_fields.built`, inlined, with the fields set of ``mask``."""
    sets = _FIELDS_SETS.get(cls)
    fields = None if sets is None else sets.get(mask)
    if fields is None:
        fields = _fields_set(cls, mask)
    model = _new(cls)
    _set_dict(model, values)
    _set_fields(model, fields)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def _same(a: Any, b: Any) -> bool:
    """Whether JSON value ``a`` is ``b`` exactly: equal, of the same types, in the same order."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        if len(a) != len(b):
            return False
        for (key, value), (other, item) in zip(a.items(), b.items(), strict=True):
            if key != other or type(other) is not str or not _same(value, item):
                return False
        return True
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _json_text(value: Any) -> str | None:
    """The JSON text that reads back as exactly ``value``, else ``None``."""
    try:
        text = _dumps(value)
    except (TypeError, ValueError):
        return None
    return text if _same(_loads(text), value) else None


_ATOMIC = frozenset({str, int, float, bool, type(None)})


def _args_segment(arguments: str, args: dict[str, Any] | None, out: list[Any]) -> None:
    if args is None:
        out.append(None)
        return
    flat: list[Any] = [len(args)]
    for key, value in args.items():
        if type(key) is not str or type(value) not in _ATOMIC:
            break
        flat += (key, value)
    else:
        out += flat
        return
    try:
        if _same(_loads(arguments or "{}"), args):
            out.append("")
            return
    except ValueError:
        pass
    text = _json_text(args)
    out.append(args if text is None else text)


class _Unusual(Exception):
    """A message whose values are not of their fields' types: the ledger keeps it as is."""


def _attachment_segments(attachments: Any, out: list[Any]) -> None:
    if type(attachments) is not tuple:
        raise _Unusual
    for item in attachments:
        cls = type(item)
        if cls is Image or cls is File:
            fields = item.__dict__
            out += (
                _IMAGE if cls is Image else _FILE,
                _mask(item),
                fields["media_type"],
                fields["data"],
                fields["path"],
                fields["url"],
                fields["name"],
            )
        else:
            out += (_KEPT, item)


def _attachments_from(record: tuple[Any, ...], at: int) -> tuple[Attachment, ...]:
    end = len(record)
    if at == end:
        return ()
    out: list[Attachment] = []
    while at < end:
        kind = record[at]
        if kind == _KEPT:
            out.append(record[at + 1])
            at += 2
            continue
        cls: type[Image | File] = Image if kind == _IMAGE else File
        values = {
            "media_type": record[at + 2],
            "data": record[at + 3],
            "path": record[at + 4],
            "url": record[at + 5],
            "name": record[at + 6],
            "kind": "image" if kind == _IMAGE else "file",
        }
        out.append(_built(cls, values, record[at + 1]))
        at += 7
    return tuple(out)


def _part_segments(parts: Any, out: list[Any]) -> None:
    if type(parts) is not tuple:
        raise _Unusual
    for part in parts:
        cls = type(part)
        fields = part.__dict__
        if cls is TextPart:
            out += (_TEXT, _mask(part), fields["text"])
        elif cls is ToolCallPart:
            arguments, args = fields["arguments"], fields["args"]
            if type(arguments) is not str or not (args is None or type(args) is dict):
                raise _Unusual
            out += (
                _CALL,
                _mask(part),
                fields["id"],
                fields["name"],
                arguments,
                fields["args_error"],
                fields["provider_id"],
            )
            _args_segment(arguments, args, out)
        elif cls is ReasoningPart:
            out += (
                _REASONING,
                _mask(part),
                fields["text"],
                fields["signature"],
                fields["redacted"],
                fields["provider"],
            )
        else:
            out += (_KEPT, part)


def _parts_from(record: tuple[Any, ...], at: int) -> tuple[AssistantPart, ...]:
    end = len(record)
    out: list[AssistantPart] = []
    while at < end:
        kind = record[at]
        if kind == _CALL:
            _, mask, id, name, arguments, args_error, provider_id, args = record[at : at + 8]
            at += 8
            if type(args) is int:
                stop = at + 2 * args
                args = dict(zip(record[at:stop:2], record[at + 1 : stop : 2], strict=True))
                at = stop
            elif type(args) is str:
                args = _loads(args or arguments or "{}")
            part = _new(ToolCallPart)
            _set_dict(
                part,
                {
                    "kind": "tool_call",
                    "id": id,
                    "name": name,
                    "arguments": arguments,
                    "args": args,
                    "args_error": args_error,
                    "provider_id": provider_id,
                },
            )
            _set_fields(part, _CALL_SETS.get(mask) or _fields_set(ToolCallPart, mask))
            _set_extra(part, None)
            _set_private(part, None)
            out.append(part)
        elif kind == _TEXT:
            out.append(_built(TextPart, {"kind": "text", "text": record[at + 2]}, record[at + 1]))
            at += 3
        elif kind == _REASONING:
            _, mask, text, signature, redacted, provider = record[at : at + 6]
            values = {
                "kind": "reasoning",
                "text": text,
                "signature": signature,
                "redacted": redacted,
                "provider": provider,
            }
            out.append(_built(ReasoningPart, values, mask))
            at += 6
        else:
            out.append(record[at + 1])
            at += 2
    return tuple(out)


_TOOL_SETS = _FIELDS_SETS.setdefault(ToolMessage, {})
_CALL_SETS = _FIELDS_SETS.setdefault(ToolCallPart, {})


def _record(message: Message) -> Any:
    """The record a ledger keeps of ``message`` (see above)."""
    cls = type(message)
    fields = message.__dict__
    out: list[Any]
    try:
        if cls is AssistantMessage:
            extras = fields["provider_extras"]
            if type(extras) is not dict:
                raise _Unusual
            if extras:
                text = _json_text(extras)
                extras = extras if text is None else text
            out = [_ASSISTANT, _mask(message), fields["model_name"], extras or None]
            _part_segments(fields["parts"], out)
            return tuple(out)
        if cls is ToolMessage:
            data = fields["data"]
            if type(data) in _ATOMIC and fields["attachments"] == ():  # most results
                return (
                    _TOOL,
                    _mask(message),
                    fields["call_id"],
                    fields["name"],
                    fields["content"],
                    False,
                    data,
                    fields["is_error"],
                )
            text = _json_text(data) if type(data) is dict or type(data) is list else None
            out = [
                _TOOL,
                _mask(message),
                fields["call_id"],
                fields["name"],
                fields["content"],
                text is not None,
                data if text is None else text,
                fields["is_error"],
            ]
            _attachment_segments(fields["attachments"], out)
            return tuple(out)
        if cls is UserMessage:
            out = [_USER, _mask(message), fields["content"], fields["name"]]
            _attachment_segments(fields["attachments"], out)
            return tuple(out)
        if cls is SystemMessage:
            return (_SYSTEM, _mask(message), fields["content"])
    except _Unusual:
        pass
    return message


def _view(record: Any) -> Message:
    """A typed message equal to the one ``record`` was made of."""
    if type(record) is not tuple:
        return record  # type: ignore[no-any-return]
    kind = record[0]
    values: dict[str, Any]
    if kind == _TOOL:
        data = record[6]
        message = _new(ToolMessage)
        _set_dict(
            message,
            {
                "kind": "tool",
                "call_id": record[2],
                "name": record[3],
                "content": record[4],
                "data": _loads(data) if record[5] else data,
                "is_error": record[7],
                "attachments": _attachments_from(record, 8) if len(record) > 8 else (),
            },
        )
        _set_fields(message, _TOOL_SETS.get(record[1]) or _fields_set(ToolMessage, record[1]))
        _set_extra(message, None)
        _set_private(message, None)
        return message
    if kind == _ASSISTANT:
        extras = record[3]
        if extras is None:
            extras = {}
        elif type(extras) is str:
            extras = _loads(extras)
        values = {
            "parts": _parts_from(record, 4),  # first, as declared
            "kind": "assistant",
            "model_name": record[2],
            "provider_extras": extras,
        }
        return _built(AssistantMessage, values, record[1])
    if kind == _USER:
        values = {
            "kind": "user",
            "content": record[2],
            "name": record[3],
            "attachments": _attachments_from(record, 4) if len(record) > 4 else (),
        }
        return _built(UserMessage, values, record[1])
    values = {"kind": "system", "content": record[2]}
    return _built(SystemMessage, values, record[1])


class MessageSeq(Sequence[Message]):
    """An immutable sequence of a ledger's messages, built one by one as they are read.

    What `Ledger.messages` returns and a model request sends: it holds the ledger's records
    (a later append does not change it) and its last message as appended (the one a model
    reads first), and ``seq[i]`` builds that one typed message, so a model that reads only
    the latest messages builds only those. A slice is a `MessageSeq` too. It equals a list
    or tuple of equal messages.
    """

    __slots__ = ("_last", "_records")

    def __init__(self, records: tuple[Any, ...] = (), last: Message | None = None) -> None:
        self._records = records
        self._last = last
        """``records[-1]`` as a message (``None``: built like the others)."""

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> MessageSeq: ...

    def __getitem__(self, index: int | slice) -> Message | MessageSeq:
        records, last = self._records, self._last
        if isinstance(index, slice):
            if last is not None:
                start, stop, step = index.indices(len(records))
                if step == 1 and stop == len(records) and start < stop:
                    return MessageSeq(records[index], last)
            return MessageSeq(records[index])
        record = records[index]
        if last is not None and (index == -1 or index == len(records) - 1):
            return last
        return _view(record)

    def __iter__(self) -> Iterator[Message]:
        records, last = self._records, self._last
        if last is None:
            return map(_view, records)
        return chain(map(_view, islice(records, len(records) - 1)), (last,))

    def __reversed__(self) -> Iterator[Message]:
        records, last = self._records, self._last
        if last is None:
            return map(_view, reversed(records))
        return chain((last,), map(_view, reversed(records[:-1])))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageSeq):
            if self._records == other._records:
                return True
        elif not isinstance(other, list | tuple):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessageSeq({list(self)!r})"


_EMPTY = MessageSeq()


def ensure_sendable(messages: Iterable[Message]) -> None:
    """Raise ``LedgerError`` (naming the call id) unless ``messages`` may be sent to a model.

    Every tool call must have exactly one result, placed after its assistant message and
    before any other message. A `Ledger` answers in O(1); a plain list is checked in O(n).
    """
    if isinstance(messages, Ledger):
        messages.ensure_sendable()
    elif isinstance(messages, MessageSeq):
        _pairs_of_records(messages._records)
    else:
        Ledger(messages).ensure_sendable()


_KINDS = {_SYSTEM: "system", _USER: "user", _ASSISTANT: "assistant", _TOOL: "tool"}


def _record_calls(record: tuple[Any, ...]) -> Iterator[tuple[str, str]]:
    """The (id, name) of each tool call in an assistant message's record."""
    at, end = 4, len(record)
    while at < end:
        kind = record[at]
        if kind == _CALL:
            yield record[at + 2], record[at + 3]
            args = record[at + 7]
            at += 8 + (2 * args if type(args) is int else 0)
        elif kind == _TEXT:
            at += 3
        elif kind == _REASONING:
            at += 6
        else:
            part = record[at + 1]
            if isinstance(part, ToolCallPart):
                yield part.id, part.name
            at += 2


def _pairs_of_records(records: tuple[Any, ...]) -> None:
    """`ensure_sendable` for a ledger's records, without building their messages."""
    check = Ledger()
    for record in records:
        if type(record) is not tuple:
            check.append(record)
            continue
        kind = record[0]
        if kind == _TOOL:
            check._answer(record[2], record[3])
        else:
            check._check_no_open_calls(_KINDS[kind])
            if kind == _ASSISTANT:
                check._open_calls = check._calls_of(_record_calls(record))
    check.ensure_sendable()


class Ledger:
    """An append-only conversation that keeps tool calls paired with their results.

    Appending checks the pairing incrementally: a result must answer an open call of the
    latest assistant message, and no other message may be appended while calls are open.
    It keeps each message as an untracked record; reading one builds a typed view of it.
    """

    __slots__ = ("_last", "_open_calls", "_open_index", "_open_message", "_records", "generation")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._records: tuple[Any, ...] = ()
        self._open_calls: dict[str, str] = {}
        self._open_index = -1
        self._last: Message | None = None
        """The last message as appended: what a model reads first (`MessageSeq`)."""
        self._open_message: AssistantMessage | None = None
        """The latest assistant message as appended, while it has open calls: the run
        answering them reads it (``ledger[ledger.assistant_index]``) and holds it anyway."""
        self.generation = 0
        """Incremented whenever the conversation is replaced rather than appended to."""
        self.extend(messages)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> MessageSeq: ...

    def __getitem__(self, index: int | slice) -> Message | MessageSeq:
        if isinstance(index, slice):
            return self.messages[index]
        if self._open_message is not None:
            self._records[index]  # out of range: an IndexError
            if index % len(self._records) == self._open_index:
                return self._open_message
        return self.messages[index]

    @property
    def messages(self) -> MessageSeq:
        """The messages now: an immutable snapshot (a later append makes a new one)."""
        return MessageSeq(self._records, self._last) if self._records else _EMPTY

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
            self._answer(message.call_id, message.name)
            if not self._open_calls:
                self._open_message = None
        else:
            self._check_no_open_calls(message.kind)
            if isinstance(message, AssistantMessage):
                self._open_calls = self._calls_of((c.id, c.name) for c in message.tool_calls)
                self._open_index = len(self._records)
                self._open_message = message if self._open_calls else None
                for part in message.parts:
                    share_fields_set(part)
        share_fields_set(message)  # messages are frozen: one set per field names will do
        self._records += (_record(message),)
        self._last = message

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
        self._records, self._open_calls = fresh._records, fresh._open_calls
        self._open_index, self._open_message = fresh._open_index, fresh._open_message
        self._last = fresh._last
        self.generation += 1

    def to_json(self, start: int = 0) -> list[dict[str, Any]]:
        """The messages (from index ``start`` on) as JSON-able dicts."""
        first, stop, _ = slice(start, None).indices(len(self._records))
        return messages_to_json(self[index] for index in range(first, stop))

    @classmethod
    def from_json(cls, data: Any) -> Ledger:
        """Rebuild a ledger from ``to_json`` output, re-checking its invariants."""
        return cls(messages_from_json(data))

    def _answer(self, call_id: str, name: str) -> None:
        """Close the open call ``call_id`` with a result that names tool ``name``."""
        called = self._open_calls.get(call_id)
        if called is None:
            raise LedgerError(
                f"tool result for call {call_id!r} answers no open call "
                "(unknown id, or already answered)"
            )
        if name != called:
            raise LedgerError(
                f"tool result for call {call_id!r} names tool {name!r}, "
                f"but the call was to {called!r}"
            )
        del self._open_calls[call_id]

    def _check_no_open_calls(self, kind: str) -> None:
        if self._open_calls:
            ids = ", ".join(sorted(self._open_calls))
            raise LedgerError(f"cannot append a {kind} message: tool call(s) {ids} have no result")

    @staticmethod
    def _calls_of(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
        calls: dict[str, str] = {}
        for call_id, name in pairs:
            if call_id in calls:
                raise LedgerError(f"assistant message repeats tool call id {call_id!r}")
            calls[call_id] = name
        return calls
