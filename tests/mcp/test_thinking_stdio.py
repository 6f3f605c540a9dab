"""The thinking server's stdio streams: the SDK's parsing, framing and error signalling."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from ponder.mcp.thinking.stdio import LineReadStream, LineTooLongError, parse_message
from tests.mcp.test_thinking_server import PONDER_COMMAND

LINES = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":"a","method":"m","params":{"a":1,"_meta":{"x":1}}}',
    '{"jsonrpc":"2.0","id":1.0,"method":"m"}',
    '{"jsonrpc":"2.0","id":true,"method":"m"}',
    '{"jsonrpc":"2.0","id":null,"method":"m"}',
    '{"jsonrpc":"2.0","id":1,"method":"m","result":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"m","\\u0065rror":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":null}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}',
    '{"jsonrpc":"2.0","id":1,"method":5}',
    '{"jsonrpc":"1.0","id":1,"method":"m"}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"result":{}}',
    '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"m","extra":1}',
    '{"jsonrpc":"2.0","id":1,"method":"m","id":2}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":{"thought":"error \\u00e9"}}',
    "[]",
    "null",
    "",
    "not json",
]


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
)
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _exchange(lines: list[str]) -> list[dict[str, Any]]:
    """The replies of a server fed ``lines`` and then end of input."""
    done = subprocess.run(
        PONDER_COMMAND,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DISABLE_THOUGHT_LOGGING": "1"},
    )
    assert done.returncode == 0
    return [json.loads(line) for line in done.stdout.splitlines()]


def _list_tools(request_id: int, meta: dict[str, Any] | None = None) -> str:
    params = {"_meta": meta} if meta else {}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}
    )


def _outcome(parse: object, line: bytes) -> object:
    try:
        message = parse(line)  # type: ignore[operator]
    except Exception as exc:
        return type(exc), str(exc)
    return type(message), message.model_dump(), message.model_fields_set


@pytest.mark.parametrize("line", LINES)
def test_parse_message_matches_the_sdk_union(line: str) -> None:
    def sdk(raw: bytes) -> types.JSONRPCMessage:
        return types.jsonrpc_message_adapter.validate_json(raw, by_name=False)

    raw = line.encode() + b"\n"
    assert _outcome(parse_message, raw) == _outcome(sdk, raw)


def test_bad_lines_are_skipped_and_every_request_is_answered_before_eof() -> None:
    lines = [
        INITIALIZE,
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        "not json",
        "",
        "[1, 2]",
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sequentialthinking",'
        '"arguments":"text"}}',
        '{"jsonrpc":"2.0","id":3,"method":"ping"}',
    ]
    replies = _exchange(lines)
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert replies[1]["error"]["code"] == types.INVALID_PARAMS
    assert replies[2]["result"] == {}


def test_the_first_request_picks_the_era_after_any_earlier_frames() -> None:
    initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    enveloped = [_list_tools(2, ENVELOPE), _list_tools(3, ENVELOPE)]
    legacy = _exchange(["junk"] * 10 + [initialized, INITIALIZE, initialized, enveloped[0]])
    assert [reply["id"] for reply in legacy] == [1, 2]
    assert legacy[1]["error"]["code"] == types.INVALID_REQUEST
    modern = _exchange([initialized, enveloped[0], INITIALIZE, enveloped[1]])
    assert [reply["id"] for reply in modern] == [2, 1, 3]
    assert modern[0]["result"]["resultType"] == "complete"
    assert modern[1]["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    assert modern[2]["result"]["tools"][0]["name"] == "sequentialthinking"


async def test_a_line_over_the_limit_is_received_as_an_error_and_reading_goes_on() -> None:
    stream = LineReadStream(line_limit=64)
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    stream.feed(b"x" * 40)
    stream.feed(b"y" * 40)  # past the limit while the line is still open
    stream.feed(b"z" * 10 + b"\n" + ping[:10])
    stream.feed(ping[10:] + b"w" * 70 + b"\n" + ping)  # a whole line over the limit
    stream.feed(ping[:-1])  # the last line, without its newline
    stream.feed_eof()
    received = [await stream.receive() for _ in range(5)]
    assert [type(item) for item in received] == [
        LineTooLongError,
        SessionMessage,
        LineTooLongError,
        SessionMessage,
        SessionMessage,
    ]
    for item in received[1::2] + received[4:]:
        assert isinstance(item, SessionMessage)
        assert item.message == parse_message(ping)
    with pytest.raises(anyio.EndOfStream):
        await stream.receive()
