"""A fake OpenAI-compatible provider: a real HTTP server speaking ``/v1/chat/completions``.

Plain and streamed answers, tool calls, ``reasoning_content`` and usage come from a
script (see `ponder.testing.script`), faults are injected per reply, and ``quirks``
switch on the rude behaviours of real servers (see `ponder.testing.quirks`). Use it as
``async with FakeOpenAIServer(script) as server``, as ``with ...`` from sync code (a
background thread), or as a subprocess::

    python -m ponder.testing.fake_openai --port 0 --script script.json

which prints its base URL on the first stdout line and serves until terminated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Self

from ponder.testing._http import HttpReply, HttpRequest, LocalHttpServer
from ponder.testing.quirks import (
    QUIRKS,
    breaks_stream,
    check_quirks,
    refusal,
    rewrite_reply,
    visible_body,
)
from ponder.testing.script import (
    FakeReply,
    FakeScript,
    RawReply,
    ScriptSource,
    load_script,
    split_text,
)

__all__ = ["FakeOpenAIServer", "OverflowShape", "main"]

_DONE = b"data: [DONE]\n\n"

OverflowShape = Literal["vllm", "llamacpp", "bare"]
"""How an over-long prompt is refused: vLLM's and llama-cpp-python's message with both
numbers, llama.cpp's ``exceed_context_size_error`` with ``n_ctx`` fields, or OpenAI's
"exceeds the context window" with no number at all."""


class FakeOpenAIServer:
    """A scripted provider on 127.0.0.1 (an ephemeral port unless ``port`` is given)."""

    path = "/v1/chat/completions"

    def __init__(
        self,
        script: ScriptSource = (),
        *,
        port: int = 0,
        model: str = "fake-model",
        quirks: Iterable[str] = (),
        context_window: int | None = None,
        overflow_shape: OverflowShape = "vllm",
        states_window: bool = False,
    ):
        """A server answering from ``script``; ``quirks`` are its rude behaviours.

        ``context_window`` refuses (in ``overflow_shape``) a request whose prompt, counted
        as a server would (its messages and tool schemas as JSON, four characters a token),
        plus its ``max_tokens`` is longer; the script's next reply waits for the next request.
        With ``states_window`` the server also states that window where local servers do:
        ``GET /props`` (llama.cpp), ``GET /v1/models`` (vLLM), ``GET /api/v0/models/<model>``
        (LM Studio); otherwise those answer 404.
        """
        self.script = FakeScript(script)
        self.context_window = context_window
        self.overflow_shape: OverflowShape = overflow_shape
        self.states_window = states_window
        self.quirks = check_quirks(quirks)
        self.model = model
        self._http = LocalHttpServer(self._handle, port=port)
        self._call_count = 0
        self.headers: list[dict[str, str]] = []
        """Every request's headers (names in lower case), in order."""

    @property
    def base_url(self) -> str:
        """The base URL to give a client (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._http.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order."""
        return self.script.requests

    async def __aenter__(self) -> Self:
        await self._http.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.stop()

    def __enter__(self) -> Self:
        self._http.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop_thread()

    async def _handle(self, request: HttpRequest, reply: HttpReply) -> None:
        self.headers.append(dict(request.headers))
        if request.method != "POST" or request.path.split("?")[0] != self.path:
            await self._other_route(request, reply)
            return
        try:
            body = request.json()
        except ValueError:
            await reply.send_json(400, self.error_body("request body is not JSON"))
            return
        if breaks_stream(body, self.quirks):
            self.script.record(body)
            await reply.start_stream()
            await reply.end_stream()
            reply.drop()
            return
        overflow = self._overflow(body)
        if overflow is not None:
            self.script.record(body)
            await reply.send_json(400, overflow)
            return
        refused = refusal(body, self.quirks)
        if refused is not None:
            self.script.record(body)
            await reply.send_json(refused[0], self.error_body(refused[1], "server_error"))
            return
        fake = self.script.next_reply(body, visible_body(body, self.quirks))
        if fake is None:
            await reply.send_json(400, self.error_body(self.script.exhausted_message()))
            return
        fake = rewrite_reply(fake, body, self.quirks)
        await asyncio.sleep(fake.delay)
        if fake.raw is not None:
            await send_raw(reply, fake.raw)
        elif fake.status is not None:
            await self._send_status(reply, fake)
        elif body.get("stream"):
            await self._send_stream(reply, fake, body)
        else:
            await self._send_completion(reply, fake, body)

    async def _send_completion(
        self, reply: HttpReply, fake: FakeReply, body: dict[str, Any]
    ) -> None:
        if fake.drop_after is not None:
            reply.drop()
            return
        if fake.malformed:
            await reply.send(200, b'{"id": "chatcmpl-fake", "choices": [')
            return
        message: dict[str, Any] = {"role": "assistant", "content": fake.content}
        if fake.reasoning is not None:
            message["reasoning_content"] = fake.reasoning
        if fake.tool_calls:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.argument_text},
                }
                for cid, c in zip(self._call_ids(fake), fake.tool_calls, strict=True)
            ]
        choice = {"index": 0, "message": message, "finish_reason": fake.default_finish()}
        result = self._envelope("chat.completion", fake, [] if fake.empty_choices else [choice])
        result["usage"] = _usage(fake, body)
        await reply.send_json(200, result)

    async def _send_stream(self, reply: HttpReply, fake: FakeReply, body: dict[str, Any]) -> None:
        await reply.start_stream()
        events = [] if fake.empty_choices else self._stream_chunks(fake)
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(
                {**self._envelope("chat.completion.chunk", fake, []), "usage": _usage(fake, body)}
            )
        for number, event in enumerate(events):
            if fake.drop_after is not None and number >= fake.drop_after:
                reply.drop()
                return
            if number >= 2 and fake.chunk_delay:  # after the role and the first piece
                await asyncio.sleep(fake.chunk_delay)
            await reply.send_chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
            if fake.malformed and number == 0:
                await reply.send_chunk(b'data: {"id": "chatcmpl-fake", "choices": [{\n\n')
        await reply.send_chunk(_DONE)
        await reply.end_stream()

    async def _other_route(self, request: HttpRequest, reply: HttpReply) -> None:
        """A request that is not a chat completion: a stated window, or 404."""
        stated = self._stated_window(request)
        if stated is not None:
            await reply.send_json(200, stated)
            return
        await reply.send_json(404, self.error_body(f"no route {request.method} {request.path}"))

    def _stated_window(self, request: HttpRequest) -> dict[str, Any] | None:
        """The body stating the window for a GET where local servers state it, if asked."""
        window = self.context_window
        if request.method != "GET" or not self.states_window or window is None:
            return None
        path = request.path.split("?")[0]
        if path == "/props":
            return {"default_generation_settings": {"n_ctx": window}, "total_slots": 1}
        if path == "/v1/models":
            entry = {"id": self.model, "object": "model", "max_model_len": window}
            return {"object": "list", "data": [entry]}
        if path == f"/api/v0/models/{self.model}":
            return {"id": self.model, "state": "loaded", "loaded_context_length": window}
        return None

    def _overflow(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The error body for a prompt longer than ``context_window``; None if it fits."""
        if self.context_window is None:
            return None
        prompt = prompt_tokens(body)
        completion = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        if not isinstance(completion, int):
            completion = 0
        window = self.context_window
        if prompt + completion <= window:
            return None
        if self.overflow_shape == "llamacpp":
            message = "the request exceeds the available context size, try increasing it"
            error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
            return {"error": {**error, "n_prompt_tokens": prompt, "n_ctx": window}}
        if self.overflow_shape == "bare":
            message = "Your input exceeds the context window of this model."
            return self.error_body(message)
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        return self.error_body(message)

    def error_body(self, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
        """The provider's JSON error body."""
        return {"error": {"message": message, "type": kind, "code": None, "param": None}}

    async def _send_status(self, reply: HttpReply, fake: FakeReply) -> None:
        assert fake.status is not None
        headers = {} if fake.retry_after is None else {"retry-after": str(fake.retry_after)}
        await reply.send_json(
            fake.status, self.error_body(fake.error_message, "api_error"), headers
        )

    def _stream_chunks(self, fake: FakeReply) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"reasoning_content": piece} for piece in split_text(fake.reasoning or "")]
        deltas += [{"content": piece} for piece in split_text(fake.content or "")]
        deltas += [{"tool_calls": [frag]} for frag in self._call_fragments(fake)]
        chunks = [self._chunk(fake, delta, None) for delta in deltas]
        chunks.append(self._chunk(fake, {}, fake.default_finish()))
        return chunks

    def _call_fragments(self, fake: FakeReply) -> list[dict[str, Any]]:
        """Heads of all calls first, then argument pieces interleaved across calls."""
        ids = self._call_ids(fake)
        heads = [
            {
                "index": i,
                "id": ids[i],
                "type": "function",
                "function": {"name": c.name, "arguments": ""},
            }
            for i, c in enumerate(fake.tool_calls)
        ]
        pieces = [split_text(c.argument_text) for c in fake.tool_calls]
        rest: list[dict[str, Any]] = [
            {"index": i, "function": {"arguments": parts[n]}}
            for n in range(max((len(p) for p in pieces), default=0))
            for i, parts in enumerate(pieces)
            if n < len(parts)
        ]
        if "repeat_function_name" in self.quirks:
            for fragment in rest:
                head = heads[fragment["index"]]
                fragment["id"], fragment["type"] = head["id"], "function"
                fragment["function"]["name"] = head["function"]["name"]
        return heads + rest

    def _call_ids(self, fake: FakeReply) -> list[str]:
        ids = []
        for call in fake.tool_calls:
            self._call_count += 1
            ids.append(call.id or f"call_fake_{self._call_count}")
        return ids

    def _chunk(self, fake: FakeReply, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return self._envelope("chat.completion.chunk", fake, [choice])

    def _envelope(self, kind: str, fake: FakeReply, choices: list[Any]) -> dict[str, Any]:
        number = self.script.served
        model = fake.model or self.model
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": kind,
            "created": 0,
            "model": model,
            "choices": choices,
        }


async def send_raw(reply: HttpReply, raw: RawReply) -> None:
    """Send ``raw`` as it is: a whole body or a chunked stream, ended or cut."""
    if raw.events is None:
        length = len(raw.body) + (1 if raw.cut else 0)
        headers = {"content-type": raw.content_type, "content-length": str(length)}
        await reply.send(raw.status, raw.body, headers)
    else:
        await reply.start_stream(raw.content_type, raw.status)
        for event in raw.events:
            await reply.send_chunk(event)
        if not raw.cut:
            await reply.end_stream()
    if raw.cut:
        reply.drop()


def prompt_tokens(body: dict[str, Any]) -> int:
    """A request's prompt tokens as this server counts them: messages and tools as JSON."""
    return (
        len(json.dumps(body.get("messages", []))) // 4 + len(json.dumps(body.get("tools", []))) // 4
    )


def _usage(fake: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
    prompt = fake.input_tokens
    if prompt is None:  # counted as the window counts it: tool schemas are prompt tokens too
        prompt = prompt_tokens(body)
    completion = fake.output_tokens
    if completion is None:
        text = (fake.content or "") + (fake.reasoning or "")
        completion = (len(text) + sum(len(c.argument_text) for c in fake.tool_calls)) // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": fake.reasoning_tokens},
    }


async def _serve_forever(server: FakeOpenAIServer) -> None:
    async with server:
        print(server.base_url, flush=True)
        await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    """Run the fake server from the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m ponder.testing.fake_openai")
    parser.add_argument("--port", type=int, default=0, help="port (0 = an ephemeral one)")
    parser.add_argument("--script", type=Path, help="JSON list of replies to serve in order")
    parser.add_argument("--model", default="fake-model", help="model name to report")
    parser.add_argument(
        "--quirk", action="append", default=[], choices=QUIRKS, help="a rude behaviour to switch on"
    )
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script.read_text()) if args.script else []
    except (OSError, ValueError) as exc:
        parser.exit(2, f"error: cannot read script {args.script}: {exc}\n")
    try:
        server = FakeOpenAIServer(script, port=args.port, model=args.model, quirks=args.quirk)
        asyncio.run(_serve_forever(server))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
