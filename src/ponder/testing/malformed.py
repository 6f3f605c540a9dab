"""Malformed provider responses, for fuzzing adapters and whole runs through the fakes.

`odd_shapes` is a named catalogue of shapes real servers have sent (arguments as an object,
``function: null``, ``type: "custom"``, a mid-stream ``{"error": ...}`` event, binary, ``null``
or HTML bodies, truncated JSON...); `malformed_replies` mixes them, from a seed, with random
mutations of valid responses (dropped keys, wrong types, lone surrogates, truncation). Each
is a `RawReply` for `FakeOpenAIServer` or `FakeAnthropicServer`; the valid response calls
a tool ``add(a, b)`` and says a little text.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any, Literal

from ponder.testing.script import RawReply

__all__ = ["Provider", "malformed_replies", "odd_shapes", "valid_response"]

Provider = Literal["openai", "anthropic"]
Shape = Callable[[Any], Any]

_ARGS = '{"a": 1, "b": 2}'
_WRONG: tuple[Any, ...] = (None, 42, -1.5, True, "", "\ud800", "x" * 3, [], {}, [1, "a"], {"k": 0})


def _openai_message() -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": _ARGS}}
    return {"role": "assistant", "content": "adding", "tool_calls": [call]}


def _openai_completion() -> dict[str, Any]:
    choice = {"index": 0, "message": _openai_message(), "finish_reason": "tool_calls"}
    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    envelope = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m"}
    return {**envelope, "choices": [choice], "usage": usage}


def _openai_chunks() -> list[Any]:
    envelope = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    head = {"index": 0, "id": "call_1", "type": "function"}
    deltas: list[Any] = [
        {"role": "assistant", "content": ""},
        {"content": "adding"},
        {"tool_calls": [{**head, "function": {"name": "add", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": _ARGS}}]},
    ]
    chunks: list[Any] = [
        {**envelope, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append(
        {**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    )
    chunks.append(
        {**envelope, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}
    )
    return chunks


def _anthropic_message() -> dict[str, Any]:
    blocks = [
        {"type": "text", "text": "adding"},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}},
    ]
    return {
        "id": "msg_x",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": blocks,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }


def _anthropic_events() -> list[Any]:
    start = {**_anthropic_message(), "content": [], "stop_reason": None}
    tool = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
    return [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ad"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": tool},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": _ARGS},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]


def valid_response(provider: Provider, streamed: bool) -> Any:
    """The valid response the mutations start from: a JSON body, or a list of stream events."""
    if provider == "openai":
        return _openai_chunks() if streamed else _openai_completion()
    return _anthropic_events() if streamed else _anthropic_message()


def _encode(value: Any) -> bytes:
    return json.dumps(value).encode()  # ASCII-escaped: a lone surrogate stays valid JSON text


def _sse(provider: Provider, event: Any) -> bytes:
    data = event if isinstance(event, bytes) else _encode(event)
    if provider == "anthropic":
        kind = event.get("type") if isinstance(event, dict) else None
        name = kind if isinstance(kind, str) else "message_delta"
        return b"event: " + name.encode("utf-8", "backslashreplace") + b"\ndata: " + data + b"\n\n"
    return b"data: " + data + b"\n\n"


def to_raw(provider: Provider, streamed: bool, value: Any, *, cut: bool = False) -> RawReply:
    """A response (body or events, as `valid_response` gives them) as a `RawReply`."""
    if not streamed:
        return RawReply(body=_encode(value), cut=cut)
    events = [_sse(provider, e) for e in value]
    if provider == "openai" and not cut:
        events.append(b"data: [DONE]\n\n")
    return RawReply(content_type="text/event-stream", events=events, cut=cut)


def _openai_call(edit: Callable[[dict[str, Any]], None]) -> Shape:
    def shape(response: Any) -> Any:
        edit(response["choices"][0]["message"]["tool_calls"][0])
        return response

    return shape


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(target: dict[str, Any]) -> None:
        if value is _DROP:
            target.pop(key, None)
        else:
            target[key] = value

    return edit


def _replace_with(new: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(call: dict[str, Any]) -> None:
        call.clear()
        call.update(new)

    return edit


def _function(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda call: _set(key, value)(call["function"])


_DROP = object()
_HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
_BINARY = bytes(range(256)) + b"\xff\xfe\x00"


def _bodies() -> dict[str, RawReply]:
    """Shapes that are not JSON at all, the same for every provider and mode."""
    return {
        "binary body": RawReply(body=_BINARY),
        "null body": RawReply(body=b"null"),
        "empty body": RawReply(body=b""),
        "html body": RawReply(content_type="text/html", body=_HTML),
        "html body 502": RawReply(status=502, content_type="text/html", body=_HTML),
        "json string body": RawReply(body=b'"ok"'),
        "json list body": RawReply(body=b"[1, 2]"),
        "truncated json": RawReply(body=b'{"id": "x", "choices": [{"message": {"content": "ad'),
        "cut body": RawReply(body=b'{"id": "x", "choi', cut=True),
        "error body 200": RawReply(body=b'{"error": {"message": "overloaded", "type": "x"}}'),
    }


def _openai_shapes() -> dict[str, Shape]:
    custom = {"id": "call_1", "type": "custom", "custom": {"name": "add", "input": _ARGS}}
    return {
        "arguments object": _openai_call(_function("arguments", {"a": 1, "b": 2})),
        "arguments null": _openai_call(_function("arguments", None)),
        "arguments number": _openai_call(_function("arguments", 12)),
        "arguments surrogate": _openai_call(_function("arguments", '{"a": "\ud800"}')),
        "function missing": _openai_call(_set("function", _DROP)),
        "function null": _openai_call(_set("function", None)),
        "function string": _openai_call(_set("function", "add")),
        "type custom": _openai_call(_replace_with(custom)),
        "name number": _openai_call(_function("name", 7)),
        "name null": _openai_call(_function("name", None)),
        "id number": _openai_call(_set("id", 99)),
        "id object": _openai_call(_set("id", {"x": 1})),
        "tool_calls object": lambda r: _at(r, ["choices", 0, "message", "tool_calls"], {"a": 1}),
        "tool_calls null entry": lambda r: _at(r, ["choices", 0, "message", "tool_calls"], [None]),
        "message null": lambda r: _at(r, ["choices", 0, "message"], None),
        "content list": lambda r: _at(r, ["choices", 0, "message", "content"], [{"t": 1}]),
        "choices object": lambda r: _at(r, ["choices"], {"0": 1}),
        "choice null": lambda r: _at(r, ["choices"], [None]),
        "usage string": lambda r: _at(r, ["usage"], "lots"),
        "finish number": lambda r: _at(r, ["choices", 0, "finish_reason"], 3),
    }


def _anthropic_shapes() -> dict[str, Shape]:
    def block(key: str, value: Any) -> Shape:
        return lambda r: _at(r, ["content", 1, key], value)

    return {
        "input string": block("input", _ARGS),
        "input null": block("input", None),
        "input number": block("input", 12),
        "input list": block("input", [1, 2]),
        "name number": block("name", 7),
        "id number": block("id", 99),
        "block type custom": block("type", "custom"),
        "block without type": lambda r: (r["content"][1].pop("type"), r)[1],
        "block null": lambda r: _at(r, ["content", 1], None),
        "content null": lambda r: _at(r, ["content"], None),
        "content object": lambda r: _at(r, ["content"], {"type": "text"}),
        "text number": lambda r: _at(r, ["content", 0, "text"], 5),
        "usage null": lambda r: _at(r, ["usage"], None),
        "stop number": lambda r: _at(r, ["stop_reason"], 3),
    }


def _stream_shapes(provider: Provider) -> dict[str, Shape]:
    error: dict[str, Any] = {"error": {"message": "overloaded, retry", "type": "server_error"}}
    if provider == "anthropic":
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}
    tool_index = 4
    return {
        "error event first": lambda events: [error],
        "error event midway": lambda events: [*events[:3], error],
        "data not json": lambda events: [*events[:2], b"<html>oops</html>", *events[2:]],
        "data null": lambda events: [*events[:2], None, *events[2:]],
        "data number": lambda events: [*events[:2], 5, *events[2:]],
        "no finish": lambda events: events[:-2],
        "tool head wrong": lambda events: _stream_tool(events, provider, tool_index),
    }


def _stream_tool(events: list[Any], provider: Provider, index: int) -> list[Any]:
    if provider == "openai":
        _at(events, [2, "choices", 0, "delta", "tool_calls", 0, "function"], None)
        _at(events, [3, "choices", 0, "delta", "tool_calls", 0, "function", "arguments"], {"a": 1})
    else:
        _at(events, [index, "content_block", "name"], 7)
        _at(events, [index + 1, "delta", "partial_json"], None)
    return events


def _at(tree: Any, path: list[Any], value: Any) -> Any:
    """``tree`` with the value at ``path`` replaced."""
    target = tree
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return tree


def odd_shapes(provider: Provider, streamed: bool) -> dict[str, RawReply]:
    """The named catalogue of odd responses for one provider and mode."""
    shapes = dict(_bodies())
    if streamed:
        shapes["html stream"] = RawReply(content_type="text/html", events=[_HTML])
        shapes["stream cut"] = to_raw(provider, True, valid_response(provider, True)[:3], cut=True)
        named = _stream_shapes(provider)
    else:
        named = _openai_shapes() if provider == "openai" else _anthropic_shapes()
    for name, shape in named.items():
        shapes[name] = to_raw(
            provider, streamed, shape(copy.deepcopy(valid_response(provider, streamed)))
        )
    return shapes


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    items = (
        tree.items()
        if isinstance(tree, dict)
        else enumerate(tree)
        if isinstance(tree, list)
        else ()
    )
    for key, value in items:
        yield from _paths(value, (*prefix, key))


def mutate(tree: Any, rng: random.Random) -> Any:
    """One random mutation of a JSON tree: a dropped key, a wrong type, a surrogate, a copy."""
    path = rng.choice([p for p in _paths(tree) if p])
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    key, old = path[-1], parent[path[-1]]
    move = rng.randrange(4)
    if move == 0 and isinstance(parent, dict):
        del parent[key]
    elif move == 1 and isinstance(old, str):
        cut = rng.randrange(len(old) + 1)
        parent[key] = old[:cut] + rng.choice(["\ud800", "\udfff", "\x00", "\u202e"]) + old[cut:]
    elif move == 2 and isinstance(parent, list):
        parent.insert(rng.randrange(len(parent) + 1), copy.deepcopy(old))
    else:
        parent[key] = copy.deepcopy(rng.choice(_WRONG))
    return tree


def _mutated(provider: Provider, streamed: bool, rng: random.Random) -> RawReply:
    value = copy.deepcopy(valid_response(provider, streamed))
    for _ in range(rng.randint(1, 3)):
        value = mutate(value, rng)
    raw = to_raw(provider, streamed, value)
    if rng.random() < 0.25:  # and cut the bytes somewhere
        if raw.events is None:
            raw.body = raw.body[: rng.randrange(len(raw.body) + 1)]
        else:
            keep = rng.randrange(len(raw.events) + 1)
            raw.events, raw.cut = raw.events[:keep], True
    return raw


def malformed_replies(
    seed: int, count: int, provider: Provider, streamed: bool
) -> Iterator[tuple[str, RawReply]]:
    """``count`` named malformed responses: a third from `odd_shapes`, the rest mutations."""
    rng = random.Random(seed)
    catalogue = sorted(odd_shapes(provider, streamed).items())
    for number in range(count):
        if rng.random() < 1 / 3:
            name, raw = catalogue[rng.randrange(len(catalogue))]
            yield name, raw
        else:
            yield f"mutation {number}", _mutated(provider, streamed, rng)
