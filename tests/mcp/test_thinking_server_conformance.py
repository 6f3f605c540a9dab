"""ponder's thinking server against the npm reference server, driven by the same client.

Both servers run over stdio and receive the same calls through the official `mcp` client.
Valid calls must give identical payloads; the reference's known flaws must be fixed in
ponder.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest

from tests.mcp.test_thinking_server import NAME, PONDER_COMMAND, T, ok, stdio
from tests.support.npm import npm_bin_command

pytestmark = pytest.mark.npm

REFERENCE = "@modelcontextprotocol/server-sequential-thinking@2026.8.31"

VALID_CALLS: list[dict[str, Any]] = [
    T(),
    T(thoughtNumber=2),
    T(thoughtNumber=2),
    T(thoughtNumber=1),
    T(thoughtNumber=5, totalThoughts=3),
    T(thoughtNumber=6, totalThoughts=2),
    T(thoughtNumber=7, isRevision=True, revisesThought=2),
    T(thoughtNumber=8, isRevision="TRUE", revisesThought=99),
    T(thoughtNumber=9, isRevision=True),
    T(thoughtNumber=10, branchFromThought=1, branchId="alt"),
    T(thoughtNumber=11, branchFromThought=1, branchId="beta"),
    T(thoughtNumber=12, branchFromThought=1, branchId="alt"),
    T(thoughtNumber=13, branchId="no-fork"),
    T(thoughtNumber=14, branchFromThought=3),
    T(thoughtNumber=15, branchFromThought=1, branchId=""),
    T(thoughtNumber=16, branchFromThought=42, branchId="far"),
    T(
        thoughtNumber=17,
        branchFromThought=1,
        branchId="with space",
        isRevision=True,
        revisesThought=1,
    ),
    T(thoughtNumber=18, branchFromThought=1, branchId="ünïcödé"),
    T(thoughtNumber=19, branchFromThought=1, branchId="a/b.c-d"),
    T(thoughtNumber="20", totalThoughts="25", nextThoughtNeeded="False"),
    T(thoughtNumber=" 21 ", nextThoughtNeeded="true", needsMoreThoughts=True),
    T(thoughtNumber=22, needsMoreThoughts="false", isRevision="false"),
    T(thoughtNumber=23, somethingElse={"x": 1}),
    T(thoughtNumber=24, thought="长" * 5000 + "🙂" * 100),
    T(thoughtNumber=25, thought="line one\nline two\twith tab"),
    T(thoughtNumber=26, totalThoughts=26, nextThoughtNeeded=False),
]


def reference_command() -> list[str]:
    return npm_bin_command(REFERENCE)


async def drive(command: list[str], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call's result as the reference shapes it: first text item, payload, isError."""
    shapes = []
    async with stdio(command) as client:
        for args in calls:
            result = await client.call_tool(NAME, args)
            first = result.content[0]
            assert isinstance(first, types.TextContent)
            if not result.is_error:
                assert len(result.content) == 1, "a success is one content item"
            shapes.append(
                {
                    "text": _without_warnings(first.text) if not result.is_error else first.text,
                    "structured": result.structured_content,
                    "is_error": result.is_error,
                }
            )
    return shapes


def _without_warnings(text: str) -> str:
    """The payload text as the reference writes it (ponder adds ``warnings`` inside it)."""
    payload = json.loads(text)
    payload.pop("warnings", None)
    return json.dumps(payload, indent=2, ensure_ascii=False)


async def test_same_valid_calls_give_identical_results() -> None:
    reference = await drive(reference_command(), VALID_CALLS)
    ponder = await drive(PONDER_COMMAND, VALID_CALLS)
    assert all(not shape["is_error"] for shape in reference), "the sequence must be valid"
    assert ponder == reference
    assert reference[-1]["structured"] == {
        "thoughtNumber": 26,
        "totalThoughts": 26,
        "nextThoughtNeeded": False,
        "branches": ["alt", "beta", "far", "with space", "ünïcödé", "a/b.c-d"],
        "thoughtHistoryLength": len(VALID_CALLS),
    }


async def test_registration_matches_except_for_fixed_annotations() -> None:
    tools = {}
    for label, command in (("reference", reference_command()), ("ponder", PONDER_COMMAND)):
        async with stdio(command) as client:
            [tools[label]] = (await client.list_tools()).tools
    ref, ours = tools["reference"], tools["ponder"]
    assert ours.name == ref.name == NAME
    assert ours.output_schema is not None and ref.output_schema is not None
    for key in ("properties", "required", "additionalProperties"):
        assert ours.output_schema[key] == ref.output_schema[key]
    ref_props, our_props = ref.input_schema["properties"], ours.input_schema["properties"]
    assert list(our_props) == list(ref_props)
    for name, schema in ref_props.items():
        assert {k: v for k, v in our_props[name].items() if k != "description"} == {
            k: v for k, v in schema.items() if k != "description"
        }
    assert ours.input_schema["required"] == ref.input_schema["required"]
    assert ref.annotations is not None and ours.annotations is not None
    assert (ref.annotations.read_only_hint, ref.annotations.idempotent_hint) == (True, True)
    assert (ours.annotations.read_only_hint, ours.annotations.idempotent_hint) == (False, False)


@pytest.mark.parametrize("branch_id", ["constructor", "__proto__", "toString"])
async def test_prototype_like_branch_ids_work_in_ponder(branch_id: str) -> None:
    calls = [T(branchFromThought=1, branchId=branch_id), T(thoughtNumber=2)]
    reference = await drive(reference_command(), calls)
    ponder = await drive(PONDER_COMMAND, calls)
    assert reference[0]["is_error"], "the reference crashes on this id"
    assert reference[1]["structured"]["thoughtHistoryLength"] == 2, "and counts the crash"
    assert [shape["structured"] for shape in ponder] == [
        {
            "thoughtNumber": 1,
            "totalThoughts": 3,
            "nextThoughtNeeded": True,
            "branches": [branch_id],
            "thoughtHistoryLength": 1,
        },
        {
            "thoughtNumber": 2,
            "totalThoughts": 3,
            "nextThoughtNeeded": True,
            "branches": [branch_id],
            "thoughtHistoryLength": 2,
        },
    ]


async def test_empty_and_ambiguous_inputs_refused_by_ponder() -> None:
    calls = [
        T(thought=""),
        T(thought="   "),
        T(thoughtNumber=True),
        T(thoughtNumber="0x10"),
        T(thoughtNumber=[2]),
        T(),
    ]
    reference = await drive(reference_command(), calls)
    ponder = await drive(PONDER_COMMAND, calls)
    assert [shape["is_error"] for shape in reference] == [False] * 6
    assert reference[3]["structured"]["thoughtNumber"] == 16
    assert [shape["is_error"] for shape in ponder] == [True] * 5 + [False]
    assert ponder[-1]["structured"]["thoughtHistoryLength"] == 1
    assert "thought: received string ''" in ponder[0]["text"]


async def test_each_ponder_connection_starts_fresh_like_a_new_reference_process() -> None:
    first = await drive(PONDER_COMMAND, [T(), T(thoughtNumber=2)])
    second = await drive(PONDER_COMMAND, [T()])
    assert first[-1]["structured"]["thoughtHistoryLength"] == 2
    assert second[0]["structured"]["thoughtHistoryLength"] == 1


async def test_capabilities_match_the_reference() -> None:
    found = {}
    for label, command in (("reference", reference_command()), ("ponder", PONDER_COMMAND)):
        async with stdio(command) as client:
            capabilities = client.server_capabilities
            assert capabilities is not None
            found[label] = capabilities.model_dump(by_alias=True, exclude_none=True)
    assert found["ponder"] == found["reference"]
    assert found["ponder"]["tools"] == {"listChanged": True}


async def test_reference_json_text_equals_ponder_text_for_first_call() -> None:
    [ref] = await drive(reference_command(), [T()])
    async with stdio(PONDER_COMMAND) as client:
        data = ok(await client.call_tool(NAME, T()))
    assert json.loads(ref["text"]) == data
