"""The thinking MCP server through the official `mcp` client (in process and over stdio)."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from ponder.mcp.thinking.server import ThinkingServerOptions, build_server
from ponder.tools.thinking import ThinkingConfig

PONDER_COMMAND = [sys.executable, "-m", "ponder.mcp.thinking.server"]
NAME = "sequentialthinking"
PAYLOAD = [
    "thoughtNumber",
    "totalThoughts",
    "nextThoughtNeeded",
    "branches",
    "thoughtHistoryLength",
]


def T(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "thought": "a thought",
        "nextThoughtNeeded": True,
        "thoughtNumber": 1,
        "totalThoughts": 3,
    }
    args.update(over)
    return args


def quiet(**kw: Any) -> Client:
    return Client(build_server(ThinkingServerOptions(log_thoughts=False, **kw)))


@asynccontextmanager
async def stdio(
    command: list[str], env: dict[str, str] | None = None, errlog: Any = None
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={"DISABLE_THOUGHT_LOGGING": "true"} if env is None else env,
    )
    transport = stdio_client(params) if errlog is None else stdio_client(params, errlog=errlog)
    async with Client(transport) as client:
        yield client


def ok(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    [text] = result.content  # exactly one item, warnings or not
    assert isinstance(text, types.TextContent)
    shown = json.loads(text.text)
    shown.pop("warnings", None)
    assert shown == result.structured_content
    return dict(result.structured_content)


def shown_warnings(result: types.CallToolResult) -> list[str]:
    [text] = result.content
    assert isinstance(text, types.TextContent)
    return list(json.loads(text.text).get("warnings", []))


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error and result.structured_content is None
    assert isinstance(result.content[0], types.TextContent)
    return result.content[0].text


async def test_s1_first_call_over_stdio_matches_reference_shape() -> None:
    async with stdio(PONDER_COMMAND) as client:
        result = await client.call_tool(NAME, T())
        raw = result.model_dump(by_alias=True, exclude_none=True)
    assert raw["content"] == [
        {
            "type": "text",
            "text": (
                '{\n  "thoughtNumber": 1,\n  "totalThoughts": 3,\n  "nextThoughtNeeded": true,\n'
                '  "branches": [],\n  "thoughtHistoryLength": 1\n}'
            ),
        }
    ]
    assert raw["structuredContent"] == {
        "thoughtNumber": 1,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 1,
    }
    assert raw.get("isError", False) is False


async def test_r1_to_r5_registration() -> None:
    async with quiet() as client:
        tools = (await client.list_tools()).tools
        info = client.server_info
    assert [t.name for t in tools] == [NAME]
    tool = tools[0]
    assert tool.title == "Sequential Thinking"
    schema = tool.input_schema
    assert schema["required"] == ["thought", "nextThoughtNeeded", "thoughtNumber", "totalThoughts"]
    assert schema["properties"]["thoughtNumber"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 9007199254740991,
        "description": "Current thought number",
    }
    assert schema["properties"]["isRevision"]["type"] == ["boolean", "string"]
    assert "additionalProperties" not in schema
    assert tool.output_schema is not None
    assert tool.output_schema["additionalProperties"] is False
    assert tool.output_schema["required"] == PAYLOAD
    assert tool.annotations == types.ToolAnnotations(
        title="Sequential Thinking",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    )
    assert info is not None and info.version == version("ponder") != "0.2.0"
    assert tool.description is not None and len(tool.description) <= 1024
    assert "NEVER mention tool names" in tool.description
    assert "thoughtNumber" in tool.description and "thought_number" not in tool.description


async def test_r6_r7_unsupported_methods_and_unknown_tool() -> None:
    async with quiet() as client:
        with pytest.raises(MCPError) as missing:
            await client.list_prompts()
        assert missing.value.code == -32601
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        assert unknown.value.code == -32602
        assert unknown.value.message == "Tool no_such_tool not found"
        assert ok(await client.call_tool(NAME, T()))["thoughtHistoryLength"] == 1


async def test_flow_with_raised_total_branches_and_revision() -> None:
    async with quiet() as client:
        seen = [
            ok(await client.call_tool(NAME, args))
            for args in [
                T(thoughtNumber=1, totalThoughts=2),
                T(thoughtNumber=2, totalThoughts=2),
                T(thoughtNumber=3, totalThoughts=2, branchFromThought=2, branchId="b"),
                T(thoughtNumber=4, totalThoughts=5, branchFromThought=2, branchId="a"),
                T(thoughtNumber=5, totalThoughts=5, isRevision="true", revisesThought="3"),
                T(thoughtNumber=6, totalThoughts=6, nextThoughtNeeded="False", branchId="b"),
            ]
        ]
    assert [(s["thoughtNumber"], s["totalThoughts"]) for s in seen] == [
        (1, 2),
        (2, 2),
        (3, 3),
        (4, 5),
        (5, 5),
        (6, 6),
    ]
    assert seen[-1] == {
        "thoughtNumber": 6,
        "totalThoughts": 6,
        "nextThoughtNeeded": False,
        "branches": ["b", "a"],
        "thoughtHistoryLength": 6,
    }


async def test_validation_errors_list_every_problem_in_camel_case() -> None:
    async with quiet() as client:
        text = error_text(await client.call_tool(NAME, {"thought": "t"}))
        assert [ln[2:].split(":")[0] for ln in text.splitlines() if ln.startswith("- ")] == [
            "nextThoughtNeeded",
            "thoughtNumber",
            "totalThoughts",
        ]
        assert "received nothing (missing)" in text and "NaN" not in text
        text = error_text(
            await client.call_tool(
                NAME,
                {
                    "thought": 5,
                    "thoughtNumber": 0,
                    "totalThoughts": "z",
                    "nextThoughtNeeded": "maybe",
                },
            )
        )
        assert "(4 problems)" in text
        for bad in (
            {"thought": ""},
            {"thought": "  \n "},
            {"thoughtNumber": True},
            {"thoughtNumber": [2]},
            {"thoughtNumber": "0x10"},
            {"nextThoughtNeeded": 1},
        ):
            assert "expected" in error_text(await client.call_tool(NAME, T(**bad)))
        assert ok(await client.call_tool(NAME, T()))["thoughtHistoryLength"] == 1


async def test_v22_snake_case_aliases_and_conflicts() -> None:
    async with quiet() as client:
        data = ok(
            await client.call_tool(
                NAME,
                {
                    "thought": "t",
                    "next_thought_needed": True,
                    "thought_number": 1,
                    "total_thoughts": 2,
                },
            )
        )
        assert data["thoughtHistoryLength"] == 1
        text = error_text(await client.call_tool(NAME, T(thought_number=2)))
        assert "thought_number/thoughtNumber: received number 2 and number 1" in text


async def test_warnings_go_inside_the_one_payload_item_in_camel_case() -> None:
    async with quiet() as client:
        clean = await client.call_tool(NAME, T())
        result = await client.call_tool(NAME, T(thoughtNumber=4, totalThoughts=4))
        branch = await client.call_tool(NAME, T(thoughtNumber=5, branchId="lonely"))
    assert shown_warnings(clean) == [] and "warnings" not in clean.content[0].text  # type: ignore[union-attr]
    assert list(ok(result)) == PAYLOAD  # structuredContent keeps the reference's schema
    assert shown_warnings(result) == ["thoughtNumber jumps from 1 to 4: thought(s) 2-3 missing"]
    [warning] = shown_warnings(branch)
    assert "branchId is set but branchFromThought is missing" in warning
    assert "_" not in warning.replace("no-fork", "")


async def test_capabilities_declare_tools_list_changed() -> None:
    async with stdio(PONDER_COMMAND) as client:
        capabilities = client.server_capabilities
    assert capabilities is not None and capabilities.tools is not None
    assert capabilities.tools.list_changed is True


async def test_s25_connections_to_one_server_are_isolated() -> None:
    server = build_server(ThinkingServerOptions(log_thoughts=False))
    async with Client(server) as first, Client(server) as second:
        for n in (1, 2, 3):
            ok(
                await first.call_tool(
                    NAME, T(thoughtNumber=n, branchFromThought=1, branchId="__proto__")
                )
            )
        other = ok(await second.call_tool(NAME, T()))
    assert other["thoughtHistoryLength"] == 1 and other["branches"] == []


async def test_history_is_bounded_per_connection() -> None:
    config = ThinkingConfig(max_history=2, max_thought_chars=50)
    async with quiet(config=config) as client:
        for n in (1, 2, 3):
            last = ok(await client.call_tool(NAME, T(thoughtNumber=n)))
        assert last["thoughtHistoryLength"] == 3
        assert "at most 50" in error_text(await client.call_tool(NAME, T(thought="x" * 51)))


class BrokenStream(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("boom")


async def test_s24_failure_while_logging_changes_nothing() -> None:
    server = build_server(ThinkingServerOptions(log_stream=BrokenStream()))
    async with Client(server) as client:
        result = await client.call_tool(NAME, T(branchFromThought=1, branchId="x"))
        assert json.loads(error_text(result)) == {"error": "boom", "status": "failed"}
    healthy = build_server(ThinkingServerOptions(log_stream=io.StringIO()))
    async with Client(healthy) as client:
        assert ok(await client.call_tool(NAME, T()))["branches"] == []


async def test_native_mode_serves_ponder_tool() -> None:
    async with quiet(native=True) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["sequential_thinking"]
        result = await client.call_tool(
            "sequential_thinking",
            {
                "thought": "t",
                "next_thought_needed": False,
                "thought_number": 1,
                "total_thoughts": 1,
            },
        )
        assert not result.is_error
        assert result.structured_content["display_type"] == "thinking"
        assert result.structured_content["incomplete_steps"] is False
        text = error_text(await client.call_tool("sequential_thinking", {}))
        assert "- next_thought_needed: received nothing (missing)" in text


@pytest.mark.parametrize("value", ["1", "YES", "on", "True"])
async def test_logging_disabled_over_stdio(tmp_path: Path, value: str) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        async with stdio(
            PONDER_COMMAND, env={"DISABLE_THOUGHT_LOGGING": value}, errlog=errlog
        ) as client:
            ok(await client.call_tool(NAME, T(thought="hidden")))
    assert "hidden" not in log.read_text()


async def test_logging_boxes_over_stdio(tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        async with stdio(
            PONDER_COMMAND, env={"DISABLE_THOUGHT_LOGGING": "false"}, errlog=errlog
        ) as client:
            ok(await client.call_tool(NAME, T(thought="第一行\nsecond 💡 line")))
            error_text(await client.call_tool(NAME, T(thought="")))
    text = log.read_text()
    assert text.count("┌") == 1, "one box per accepted thought, none for a rejected one"
    box = [line for line in text.splitlines() if line[:1] in "┌│├└"]
    assert box[1].startswith("│ 💭 Thought 1/3")
    assert "│ 第一行" in box[3] and "│ second 💡 line" in box[4]


async def test_a_thought_longer_than_a_pipe_buffer_crosses_stdio_whole() -> None:
    long_thought = "step " * 19_000  # 95,000 characters, one JSON-RPC line well over 64 KiB
    async with stdio(PONDER_COMMAND) as client:
        first = ok(await client.call_tool(NAME, T(thought=long_thought)))
        second = ok(await client.call_tool(NAME, T(thoughtNumber=2)))
    assert first["thoughtHistoryLength"] == 1 and second["thoughtHistoryLength"] == 2
