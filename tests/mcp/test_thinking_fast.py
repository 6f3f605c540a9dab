"""The in-line tools/call path answers byte for byte as the SDK-only path does.

Both servers run as real processes over stdio pipes; the SDK-only one is
``main(fast_path=False)``. Raw JSON-RPC lines (pipelined, then end of input) and the
official `mcp` client drive them; replies must be identical.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from typing import IO, Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from ponder.mcp.thinking.fast import FastToolCall
from ponder.mcp.thinking.server import ThinkingServerOptions, _build, _Scopes
from tests.mcp.test_thinking_server import NAME, PONDER_COMMAND, T
from tests.mcp.test_thinking_stdio import INITIALIZE

SDK_ONLY_COMMAND = [
    sys.executable,
    "-c",
    "from ponder.mcp.thinking.server import main; main(fast_path=False)",
]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    body["params"] = {**(params or {}), "_meta": ENVELOPE}
    return json.dumps(body, ensure_ascii=False)


def _call(request_id: Any, arguments: Any, name: str = NAME) -> str:
    return _request(request_id, "tools/call", {"name": name, "arguments": arguments})


CALLS = [
    _request(1, "server/discover"),
    _call(2, T()),
    _call(3, T(thoughtNumber=2)),
    _call("s-4", T(thoughtNumber=3, branchFromThought=2, branchId="alt")),
    _call(5, T(thoughtNumber=4, isRevision=True, revisesThought=2)),
    _call(6, T(thoughtNumber=5, isRevision="TRUE", revisesThought="2", revisionType="amend")),
    _call(7, T(thoughtNumber=9, extra=1)),
    _call(8, T(thought="")),
    _call(9, T(thoughtNumber="2.0", nextThoughtNeeded="yes", totalThoughts=True)),
    _call(10, {"thought": "only a thought"}),
    _call(11, T(thought_number=3)),
    _call(12, T(thought='é \u2028 \x00 \x1f " \\ 💭 {}', thoughtNumber=10)),
    _call(13, T(thoughtNumber=11, branchFromThought=1, branchId="__proto__")),
    _call(14, None),
    _call(15, "text"),
    _call(16, T(), name="nope"),
    _request(17, "ping"),
    _request(18, "tools/list"),
    _request(19, "no/such/method"),
    _call(2**53, T(thoughtNumber=12)),
    _call(2**60, T(thoughtNumber=13)),
    _call(-1, T(thoughtNumber=14)),
    _call("", T(thoughtNumber=15)),
    '{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"sequentialthinking",'
    '"arguments":{"thought":"f","nextThoughtNeeded":true,"thoughtNumber":16,"totalThoughts":3},'
    '"_meta":' + json.dumps(ENVELOPE) + "}}",
    _call(20, T(thoughtNumber=17)).replace('"id": 20', '"id": 20, "extra": 1'),
    _call(21, T(thoughtNumber=18)).replace('"id": 21', '"id": 99, "id": 21'),
    _call(22, T(thoughtNumber=19)).replace("2026-07-28", "2099-01-01"),
    _call(23, T(thoughtNumber=20)).replace('"io.modelcontextprotocol/clientCapabilities"', '"x"'),
    _call(24, T(thoughtNumber=21)).replace('"name": "sequentialthinking"', '"name": 5'),
    _call(25, [1, 2]),
    _call(26, T(thoughtNumber=22)).replace('"jsonrpc": "2.0"', '"jsonrpc": "1.0"'),
    _request(27, "initialize", {"protocolVersion": "2025-06-18"}),
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}',
    "not json",
    "",
    "[" + _call(28, T(thoughtNumber=23)) + "]",
    '{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"sequentialthinking",'
    '"arguments":{"thought":"n","nextThoughtNeeded":true,"thoughtNumber":NaN,"totalThoughts":3},'
    '"_meta":' + json.dumps(ENVELOPE) + "}}",
    _call(30, T(thoughtNumber=24, thought="x" * 100_001)),
    _call(31, T(thoughtNumber=25, thought="y" * 200_000)),
    _call(32, T(thoughtNumber=26, nextThoughtNeeded=False)),
    _request(
        33, "tools/call", {"name": NAME, "arguments": T(thoughtNumber=27), "task": {"ttl": 5}}
    ),
    _request(34, "tools/call", {"name": NAME, "arguments": T(thoughtNumber=28), "task": "soon"}),
    _call(35, T(thoughtNumber=29)).replace('"_meta": {', '"_meta": {"progressToken": true, '),
    _call(36, T(thoughtNumber=30)).replace('"_meta": {', '"_meta": {"progressToken": "p", '),
    _call(37, T(thoughtNumber=31)).replace('{"name": "raw", "version": "1"}', "5"),
    _call(38, T(thoughtNumber=32)),
    json.dumps(json.loads(_call(39, T(thought="lone \ud800 surrogate")))),
    json.dumps(json.loads(_call(40, {**T(thoughtNumber=33), "k\udfff": 1}))),
    _call(41, T(thoughtNumber=33)),
]


def _exchange(command: list[str], lines: list[str], end: str = "\n") -> list[str]:
    """The reply lines of a server fed ``lines`` back to back, ``end``, then end of input."""
    done = subprocess.run(
        command,
        input="\n".join(lines) + end,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        env={**os.environ, "DISABLE_THOUGHT_LOGGING": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_pipelined_raw_lines_get_identical_replies_in_the_same_order() -> None:
    fast, sdk = _exchange(PONDER_COMMAND, CALLS), _exchange(SDK_ONLY_COMMAND, CALLS)
    assert fast == sdk
    replies = {json.dumps(json.loads(line)["id"]): json.loads(line) for line in fast}
    assert replies["2"]["result"]["structuredContent"]["thoughtHistoryLength"] == 1
    assert replies['"s-4"']["result"]["structuredContent"]["branches"] == ["alt"]
    assert replies["8"]["result"]["isError"] is True
    assert replies["16"]["error"]["code"] == types.INVALID_PARAMS
    assert replies["32"]["result"]["structuredContent"]["nextThoughtNeeded"] is False


def test_the_last_request_before_end_of_input_is_answered() -> None:
    cases = [([CALLS[0], CALLS[1]], 2), ([CALLS[0], CALLS[1], "not json"], 2), (CALLS[:3], 3)]
    for lines, last_id in cases:
        fast, sdk = _exchange(PONDER_COMMAND, lines), _exchange(SDK_ONLY_COMMAND, lines)
        assert fast == sdk
        assert json.loads(fast[-1])["id"] == last_id


def test_a_last_line_without_its_newline_is_answered() -> None:
    lines = [CALLS[0], CALLS[1], CALLS[2]]
    fast = _exchange(PONDER_COMMAND, lines, end="")
    assert fast == _exchange(SDK_ONLY_COMMAND, lines, end="")
    assert [json.loads(line)["id"] for line in fast] == [1, 2, 3]


def _unread(pipe: IO[bytes]) -> int:
    """Bytes written to ``pipe`` that its reader has not read yet (Linux ``FIONREAD``)."""
    return int(struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0])


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the server stopped reading or writing"
        time.sleep(0.001)


def _serve(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DISABLE_THOUGHT_LOGGING": "1"},
    )


def test_a_request_split_across_reads_is_answered_once_whole() -> None:
    call = _call(2, T(thought="split → in the middle of a character")).encode() + b"\n"
    cut = call.index("→".encode()) + 1
    with _serve(PONDER_COMMAND) as server:
        stdin, stdout = server.stdin, server.stdout
        assert stdin is not None and stdout is not None
        stdin.write(CALLS[0].encode() + b"\n")
        stdin.flush()
        replies = [stdout.readline()]
        for piece in (call[:cut], call[cut:-20], call[-20:]):
            stdin.write(piece)
            stdin.flush()
            _wait_until(lambda: _unread(stdin) == 0)  # each piece in a read of its own
        replies.append(stdout.readline())
        stdin.close()
        assert server.wait(timeout=60) == 0
    expected = _exchange(SDK_ONLY_COMMAND, [CALLS[0], call.decode().rstrip("\n")])
    assert [reply.decode().rstrip("\n") for reply in replies] == expected


def test_a_client_that_stops_reading_gets_every_reply_in_order() -> None:
    calls = [_call(100 + n, T(thoughtNumber=n)) for n in range(1, 1501)]
    lines = [CALLS[0], *calls[:700], _request(99, "ping"), *calls[700:]]
    payload = "".join(line + "\n" for line in lines).encode()
    with _serve(PONDER_COMMAND) as server:
        stdin, stdout = server.stdin, server.stdout
        assert stdin is not None and stdout is not None

        def write_all() -> None:
            stdin.write(payload)  # blocks while the server waits for the client to read
            stdin.close()

        writer = threading.Thread(target=write_all)
        writer.start()
        _wait_until(lambda: _unread(stdout) > 60_000)  # the server has filled the pipe
        replies = stdout.read().decode().splitlines()
        writer.join()
        assert server.wait(timeout=60) == 0
    assert replies == _exchange(SDK_ONLY_COMMAND, lines)
    expected_ids = [1, *range(101, 801), 99, *range(801, 1601)]
    assert [json.loads(reply)["id"] for reply in replies] == expected_ids


def test_a_call_the_sdk_handles_changes_state_before_a_later_in_line_call() -> None:
    first = _call(2**60, T())  # an id past 2^53 is left to the SDK
    lines = [CALLS[0], first, _call(40, T(thoughtNumber=2))]
    fast, sdk = _exchange(PONDER_COMMAND, lines), _exchange(SDK_ONLY_COMMAND, lines)
    assert fast == sdk
    results = [json.loads(line)["result"] for line in fast[1:]]
    lengths = [result["structuredContent"]["thoughtHistoryLength"] for result in results]
    assert lengths == [1, 2]


def test_handshake_era_connections_are_served_by_the_sdk_alike() -> None:
    plain = [line.replace(', "_meta": ' + json.dumps(ENVELOPE), "") for line in CALLS[1:22]]
    lines = [INITIALIZE, '{"jsonrpc":"2.0","method":"notifications/initialized"}', *plain]
    assert _exchange(PONDER_COMMAND, lines) == _exchange(SDK_ONLY_COMMAND, lines)


async def _client_transcript(command: list[str], mode: str) -> list[Any]:
    transcript: list[Any] = []
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={"DISABLE_THOUGHT_LOGGING": "true"}
    )
    async with Client(stdio_client(params), mode=mode) as client:
        transcript.append((await client.list_tools()).model_dump())
        arguments = [
            T(),
            T(thoughtNumber=2),
            T(thoughtNumber=3, branchFromThought=2, branchId="b"),
            T(thoughtNumber=4, isRevision=True, revisesThought=1),
            T(thoughtNumber="x", thought=" "),
            T(thoughtNumber=7, nextThoughtNeeded=False),
        ]
        for args in arguments:
            transcript.append((await client.call_tool(NAME, args)).model_dump())
        try:
            await client.call_tool("nope", T())
        except MCPError as exc:
            transcript.append(exc.error.model_dump())
        if mode == "legacy":
            transcript.append((await client.send_ping()).model_dump())
    return transcript


@pytest.mark.filterwarnings("ignore:ping is removed")
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_sees_the_same_results(mode: str) -> None:
    fast = await _client_transcript(PONDER_COMMAND, mode)
    assert fast == await _client_transcript(SDK_ONLY_COMMAND, mode)
    assert len(fast) == 8 + (mode == "legacy")
    assert fast[7]["code"] == types.INVALID_PARAMS


def _fast(**kw: Any) -> tuple[FastToolCall, _Scopes]:
    server = _build(ThinkingServerOptions(log_thoughts=False, **kw))
    server.middleware = []  # as `python -m` serves it without a tracer provider
    assert server.fast_call is not None
    return server.fast_call, _Scopes(4)


@pytest.mark.parametrize("native", [False, True])
def test_in_line_answers_cover_the_hot_call_only(native: bool) -> None:
    fast, scopes = _fast(native=native)
    answer = fast.bind(scopes)
    assert answer is not None
    name = "sequential_thinking" if native else NAME
    args = {"thought": "t", "next_thought_needed": True, "thought_number": 1, "total_thoughts": 2}
    reply = answer(_call(1, args, name=name).encode())
    assert reply is not None and reply.endswith(b"\n")
    assert json.loads(reply)["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert answer(_call(2, args, name="other").encode()) is None
    assert answer(_request(3, "ping").encode()) is None
    assert answer(b"not json\n") is None


def test_no_in_line_answers_with_middleware() -> None:
    fast, scopes = _fast()
    fast.server.middleware = [lambda ctx, call_next: call_next(ctx)]
    assert fast.bind(scopes) is None


def test_a_raising_call_gets_the_sdk_modern_entry_error() -> None:
    fast, scopes = _fast()

    def broken(state: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    answer = FastToolCall(fast.server, NAME, broken).bind(scopes)
    assert answer is not None
    reply = answer(_call(7, T()).encode())
    assert reply is not None
    assert json.loads(reply) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": types.INTERNAL_ERROR, "message": "Internal server error"},
    }
