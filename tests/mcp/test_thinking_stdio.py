"""The thinking server's stdio streams: the SDK's parsing, framing and error signalling."""

from __future__ import annotations

import json
import os
import subprocess

import mcp_types as types
import pytest

from ponder.mcp.thinking_stdio import parse_message
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
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    lines = [
        json.dumps(init),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        "not json",
        "",
        "[1, 2]",
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sequentialthinking",'
        '"arguments":"text"}}',
        '{"jsonrpc":"2.0","id":3,"method":"ping"}',
    ]
    done = subprocess.run(
        PONDER_COMMAND,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DISABLE_THOUGHT_LOGGING": "1"},
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert replies[1]["error"]["code"] == types.INVALID_PARAMS
    assert replies[2]["result"] == {}
