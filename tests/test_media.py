"""Images and files in prompts and tool results: the ledger, checkpoints and both wires."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.media import INLINE_MAX_BYTES, File, Image
from ponder.messages import UserMessage, messages_from_json, messages_to_json
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import open_store
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n%fake\n"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@tool
def screenshot(page: str) -> Image:
    """Take a screenshot of a page.

    Args:
        page: Which page.
    """
    return Image(PNG)


async def test_a_prompt_with_an_image_and_a_file_reaches_the_ledger_and_the_model(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    model = ScriptedModel(["A chart and a report."])
    agent = Agent(model, agent_strategy="no-action")
    result = await agent.run(["What are these?", Image(PNG), File(report)])
    sent = [m for m in model.requests[0].messages if isinstance(m, UserMessage)][-1]
    assert sent.content == "What are these?"
    image, document = sent.attachments
    assert image.kind == "image" and image.media_type == "image/png" and image.data == _b64(PNG)
    assert document.kind == "file" and document.media_type == "application/pdf"
    assert document.name == "report.pdf"
    again = messages_from_json(json.loads(json.dumps(messages_to_json(result.messages))))
    assert again == result.messages
    plain = messages_to_json([UserMessage(content="hi")])
    assert plain == [{"kind": "user", "content": "hi", "name": None}]  # no empty field stored


async def test_openai_gets_content_parts_and_tool_images_after_the_results() -> None:
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="screenshot", id="c1", arguments={"page": "a"})]),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})]),
        FakeReply(content="It shows a page."),
    ]
    async with FakeOpenAIServer(script) as server:
        agent = Agent(
            "openai:gpt-4o-mini",
            tools=[screenshot],
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        await agent.run(["Look at this.", Image("https://example.com/cat.png")])
        await agent.model.aclose()  # type: ignore[attr-defined]
    first = server.requests[0]["messages"]
    user = next(m for m in first if m["role"] == "user")
    assert user["content"] == [
        {"type": "text", "text": "Look at this."},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    later = server.requests[1]["messages"]
    roles = [m["role"] for m in later]
    tool_at = roles.index("tool")
    assert isinstance(later[tool_at]["content"], str)
    after = later[tool_at + 1]
    assert after["role"] == "user"
    assert after["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{_b64(PNG)}"},
    }


async def test_anthropic_gets_image_and_document_blocks(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    script = [
        FakeReply(tool_calls=[FakeToolCall(name="screenshot", id="c1", arguments={"page": "a"})]),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})]),
        FakeReply(content="Seen."),
    ]
    async with FakeAnthropicServer(script) as server:
        agent = Agent(
            "anthropic:claude-3-5-haiku-latest",
            tools=[screenshot],
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        await agent.run(["Compare.", Image(PNG), File(PDF)])
        await agent.model.aclose()  # type: ignore[attr-defined]
    blocks = server.requests[0]["messages"][0]["content"]
    assert blocks[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": _b64(PNG)},
    }
    assert blocks[1]["type"] == "document"
    assert blocks[1]["source"]["media_type"] == "application/pdf"
    results = [
        b
        for m in server.requests[1]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert results[0]["content"][1]["type"] == "image"


async def test_a_provider_without_vision_is_refused_before_the_request() -> None:
    async with FakeOpenAIServer(["never sent"]) as server:
        agent = Agent(
            "deepseek:deepseek-chat",
            base_url=server.base_url,
            api_key="k",
            agent_strategy="no-action",
        )
        with pytest.raises(UserError, match="takes no images"):
            await agent.run(["What is this?", Image(PNG)])
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert server.requests == []


async def test_a_large_file_is_checkpointed_by_reference(tmp_path: Path) -> None:
    big = tmp_path / "scan.png"
    big.write_bytes(PNG + b"\x00" * INLINE_MAX_BYTES)
    image = Image(big)
    assert image.data is None and image.path == str(big)

    @tool(requires_approval=True)
    def archive(name: str) -> str:
        """Archive it.

        Args:
            name: A name.
        """
        return "archived"

    store = open_store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    script = [
        call_tools(("archive", {"name": "scan"})),
        call_tools(("agent_stop", {"result": "done"})),
        reply("Archived."),
    ]
    agent = Agent(ScriptedModel(script), tools=[archive], store=store, agent_thought_mode="chat")
    first = await agent.run(["Archive this scan.", image])
    stored = await store.load(first.run_id)
    user = next(m for m in stored.messages if m["kind"] == "user" and m.get("attachments"))
    assert user["attachments"][0]["path"] == str(big) and user["attachments"][0]["data"] is None
    later = ScriptedModel(script[1:])
    other = Agent(later, tools=[archive], store=store, agent_thought_mode="chat")
    done = await other.resume(first.run_id, "approve")
    assert done.output == "Archived."
    resent = [m for m in later.requests[0].messages if isinstance(m, UserMessage)]
    assert resent[0].attachments[0].base64() == _b64(big.read_bytes())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: Image(d / "missing.png"), "missing.png'\\): cannot read it"),
        (lambda d: Image(b"not an image"), r"Image\(bytes\): unknown type"),
        (lambda d: Image(_text(d)), "not an image"),
        (lambda d: File(b"\x00" * (INLINE_MAX_BYTES + 1)), "inline cap"),
    ],
)
def test_unreadable_or_unknown_media_are_user_errors(
    tmp_path: Path, make: Any, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        make(tmp_path)


def _text(folder: Path) -> Path:
    notes = folder / "notes.txt"
    notes.write_text("plain words")
    return notes


async def test_a_prompt_of_other_things_is_a_user_error() -> None:
    model = ScriptedModel(["x"])
    with pytest.raises(UserError, match="prompt items are str, Image or File"):
        await Agent(model).run(["text", 42])  # type: ignore[list-item]
    assert model.requests == []
