"""A fake Anthropic provider: a real HTTP server speaking ``/v1/messages``.

Same scripts and faults as `FakeOpenAIServer`, and Anthropic's prompt cache (`PromptCache`):
``reasoning`` becomes a signed thinking block, ``tool_calls`` become ``tool_use`` blocks (a
string argument is streamed verbatim as ``input_json_delta``, so malformed JSON can be
scripted), and streams use the Messages API event sequence (``message_start`` …
``message_stop``).
"""

from __future__ import annotations

import json
from typing import Any

from ponder.testing._http import HttpReply
from ponder.testing.fake_openai import FakeOpenAIServer
from ponder.testing.prompt_cache import PromptCache
from ponder.testing.script import FakeReply, split_text

__all__ = ["FakeAnthropicServer"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class FakeAnthropicServer(FakeOpenAIServer):
    """A scripted Messages API on 127.0.0.1; give ``base_url`` to ``AnthropicModel``."""

    path = "/v1/messages"

    def __init__(self, script: Any = (), *, port: int = 0, model: str = "claude-fake") -> None:
        super().__init__(script, port=port, model=model)
        self.cache = PromptCache()
        """The prompt cache: requests that mark ``cache_control`` read what earlier ones wrote."""

    @property
    def base_url(self) -> str:
        """The base URL to give a client (``http://127.0.0.1:<port>``)."""
        return f"http://127.0.0.1:{self._http.port}"

    def error_body(self, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
        """The Messages API error body."""
        return {"type": "error", "error": {"type": kind, "message": message}}

    async def _send_completion(
        self, reply: HttpReply, fake: FakeReply, body: dict[str, Any]
    ) -> None:
        if fake.drop_after is not None:
            reply.drop()
            return
        if fake.malformed:
            await reply.send(200, b'{"id": "msg_fake", "content": [')
            return
        message = self._message(fake, body)
        message["content"] = [self._block(fake, kind, value) for kind, value in self._items(fake)]
        message["stop_reason"] = _STOP.get(fake.default_finish(), fake.default_finish())
        await reply.send_json(200, message)

    async def _send_stream(self, reply: HttpReply, fake: FakeReply, body: dict[str, Any]) -> None:
        await reply.start_stream()
        events = self._events(fake, body)
        for number, event in enumerate(events):
            if fake.drop_after is not None and number >= fake.drop_after:
                reply.drop()
                return
            data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            await reply.send_chunk(data.encode())
            if fake.malformed and number == 0:
                await reply.send_chunk(b'event: content_block_start\ndata: {"type": "con\n\n')
        await reply.end_stream()

    def _events(self, fake: FakeReply, body: dict[str, Any]) -> list[dict[str, Any]]:
        start = self._message(fake, body)
        start["usage"]["output_tokens"] = 0
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, (kind, value) in enumerate(self._items(fake)):
            events += self._block_events(index, self._block(fake, kind, value), value)
        stop = _STOP.get(fake.default_finish(), fake.default_finish())
        output = self._message(fake, body)["usage"]["output_tokens"]
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": output},
            }
        )
        events.append({"type": "message_stop"})
        return events

    @staticmethod
    def _block_events(index: int, block: dict[str, Any], value: Any) -> list[dict[str, Any]]:
        kind = block["type"]
        empty = {"text": {"text": ""}, "thinking": {"thinking": "", "signature": ""}}
        head = {**block, **empty.get(kind, {})}
        if kind == "tool_use":
            head["input"] = {}
            pieces = [
                ("input_json_delta", "partial_json", p) for p in split_text(value.argument_text)
            ]
        elif kind == "thinking":
            pieces = [("thinking_delta", "thinking", p) for p in split_text(block["thinking"])]
            pieces.append(("signature_delta", "signature", block["signature"]))
        else:
            pieces = [("text_delta", "text", p) for p in split_text(block["text"])]
        events = [{"type": "content_block_start", "index": index, "content_block": head}]
        events += [
            {"type": "content_block_delta", "index": index, "delta": {"type": t, key: v}}
            for t, key, v in pieces
        ]
        events.append({"type": "content_block_stop", "index": index})
        return events

    @staticmethod
    def _items(fake: FakeReply) -> list[tuple[str, Any]]:
        items: list[tuple[str, Any]] = []
        if fake.reasoning is not None:
            items.append(("thinking", fake.reasoning))
        if fake.content:
            items.append(("text", fake.content))
        items += [("tool_use", call) for call in fake.tool_calls]
        return items

    def _block(self, fake: FakeReply, kind: str, value: Any) -> dict[str, Any]:
        if kind == "thinking":
            signature = fake.reasoning_signature or "sig-fake"
            return {"type": "thinking", "thinking": value, "signature": signature}
        if kind == "text":
            return {"type": "text", "text": value}
        self._call_count += 1
        arguments = value.arguments if isinstance(value.arguments, dict) else {}
        call_id = value.id or f"toolu_fake_{self._call_count}"
        return {"type": "tool_use", "id": call_id, "name": value.name, "input": arguments}

    def _message(self, fake: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
        prompt = fake.input_tokens
        if prompt is None:
            prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = fake.output_tokens
        if completion is None:
            completion = len((fake.content or "") + (fake.reasoning or "")) // 4 + 1
        read = self.cache.read(body)
        return {
            "id": f"msg_fake_{self.script.served}",
            "type": "message",
            "role": "assistant",
            "model": fake.model or self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - min(read, prompt),
                "cache_read_input_tokens": min(read, prompt),
                "output_tokens": completion,
            },
        }
