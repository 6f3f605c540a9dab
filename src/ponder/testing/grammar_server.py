"""A real local model server whose tool calls follow a grammar: ``tool_choice`` obeyed.

An OpenAI-compatible ``/v1/chat/completions`` over ``llama_cpp.Llama``. The prompt is
ChatML with the offered tools listed in the system message (Hermes style: ``<tools>``,
``<tool_call>``, ``<tool_response>``). With ``tool_choice`` ``"required"`` or a named
function the answer is constrained by a grammar built from the JSON schema
``{"name": <a tool's name>, "arguments": <that tool's parameters>}`` and comes back as
``tool_calls``; with ``"auto"`` the grammar allows either a ``<tool_call>`` block or plain
text that does not start with ``<``; with ``"none"`` (or no tools) nothing is constrained.
A ``response_format`` of type ``json_schema`` or ``json_object`` is constrained likewise.
String arguments without a ``maxLength`` are capped at `STRING_CAP` characters (a small
model fills a string until ``max_tokens`` cuts the call). One call per response; an answer
cut by ``max_tokens`` inside a call comes back as text with ``finish_reason: "length"``.
A prompt that overflows the window is refused (400) in llama.cpp's words. Usage carries
``prompt_tokens_details.cached_tokens`` (the prompt prefix the model reused from the
previous request); ``GET /props`` states ``n_ctx`` and ``GET /v1/models``
``max_model_len``, so the ``llamacpp`` and ``vllm`` profiles learn the window.
The log has an access line per request and llama.cpp's ``prefix-match hit`` lines, as
the stock server's has (see `ponder.testing.llama_server`).

Only this server process imports ``llama_cpp``; the module itself needs only the standard
library, so an interpreter with ``llama-cpp-python`` and no ponder runs it by path::

    python src/ponder/testing/grammar_server.py --model FILE.gguf --port 8090 --n_ctx 4096

(``python -m ponder.testing.grammar_server ...`` where ponder is importable too).
`ponder.testing.llama_server.GrammarServer` starts it for tests and benchmarks.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "call_schema",
    "main",
    "parse_answer",
    "render_prompt",
    "tools_block",
]

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
STRING_CAP = 60
"""Characters a string argument may have unless its schema says otherwise."""
_TEXT_RULE = 'text ::= [^<] [^\\x00]*\ncall-block ::= "<tool_call>\\n" call "\\n</tool_call>"\n'


def _text(content: Any) -> str:
    """A message's content as text (parts joined, images left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def tools_block(tools: Sequence[Mapping[str, Any]]) -> str:
    """The system-prompt text that lists ``tools`` and says how to call one."""
    lines = [json.dumps(t.get("function", t), separators=(", ", ": ")) for t in tools]
    return (
        "You may call these tools:\n<tools>\n" + "\n".join(lines) + "\n</tools>\n"
        'To call one, reply with <tool_call>\n{"name": <tool name>, "arguments": '
        "<arguments object>}\n</tool_call>"
    )


def _call_text(call: Mapping[str, Any]) -> str:
    function = call.get("function", {})
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        arguments = raw
    body = json.dumps({"name": function.get("name", ""), "arguments": arguments})
    return f"{CALL_OPEN}\n{body}\n{CALL_CLOSE}"


def render_prompt(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], prefill: str = ""
) -> str:
    """The ChatML prompt: the tools in the first system message, calls and results as text."""
    turns: list[tuple[str, str]] = []
    for message in messages:
        role, text = str(message.get("role", "user")), _text(message.get("content"))
        if role in ("system", "developer"):
            turns.append(("system", text))
        elif role == "assistant":
            calls = [_call_text(c) for c in message.get("tool_calls") or ()]
            turns.append(("assistant", "\n".join(filter(None, [text, *calls]))))
        elif role == "tool":
            turns.append(("user", f"<tool_response>\n{text}\n</tool_response>"))
        else:
            turns.append(("user", text))
    if tools:
        if turns and turns[0][0] == "system":
            turns[0] = ("system", f"{turns[0][1]}\n\n{tools_block(tools)}".lstrip())
        else:
            turns.insert(0, ("system", tools_block(tools)))
    body = "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns)
    return f"{body}<|im_start|>assistant\n{prefill}"


def _arguments_schema(parameters: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    schema.update(parameters if isinstance(parameters, Mapping) else {})
    if schema["type"] == "object":
        schema.setdefault("additionalProperties", False)
        properties: Mapping[str, Any] = schema.get("properties") or {}
        schema["properties"] = {name: _capped(value) for name, value in properties.items()}
    return schema


def _capped(schema: Any) -> Any:
    """A string argument without a ``maxLength`` gets `STRING_CAP`: calls fit ``max_tokens``."""
    if isinstance(schema, Mapping) and schema.get("type") == "string":
        return {"maxLength": STRING_CAP, **schema}
    return schema


def call_schema(tools: Sequence[Mapping[str, Any]], name: str | None = None) -> dict[str, Any]:
    """The JSON schema of one call: to the tool ``name``, or to any of ``tools``."""
    options = []
    for tool in tools:
        function = tool.get("function", tool)
        if name is not None and function.get("name") != name:
            continue
        options.append(
            {
                "type": "object",
                "properties": {
                    "name": {"const": function.get("name")},
                    "arguments": _arguments_schema(function.get("parameters")),
                },
                "required": ["name", "arguments"],
            }
        )
    if not options:
        raise ValueError(f"tool_choice names {name!r}, which is not among the tools")
    return options[0] if len(options) == 1 else {"anyOf": options}


def parse_answer(text: str, forced: bool) -> tuple[str | None, list[dict[str, Any]]]:
    """``(content, tool_calls)`` of a generated answer; a call that does not parse stays text."""
    body = text.strip()
    if not forced:
        if not body.startswith(CALL_OPEN):
            return text, []
        body = body.removeprefix(CALL_OPEN).removesuffix(CALL_CLOSE).strip()
    try:
        found = json.loads(body, strict=False)  # the grammar lets raw newlines into strings
    except json.JSONDecodeError:
        return text, []
    if not isinstance(found, dict) or not isinstance(found.get("name"), str):
        return text, []
    call = {
        "id": f"call_{time.monotonic_ns():x}",
        "type": "function",
        "function": {"name": found["name"], "arguments": json.dumps(found.get("arguments", {}))},
    }
    return None, [call]


class ChatEngine:
    """One loaded model answering chat requests, one at a time."""

    def __init__(self, model_path: str, n_ctx: int, alias: str, threads: int | None) -> None:
        import llama_cpp  # only the server process loads the model library

        self.llama_cpp = llama_cpp
        self.llm = llama_cpp.Llama(
            model_path=model_path, n_ctx=n_ctx, n_threads=threads, verbose=True
        )
        self.n_ctx, self.alias = n_ctx, alias
        self.lock = threading.Lock()

    def grammar(self, schema: Mapping[str, Any] | None, either_text: bool) -> Any:
        """A grammar for ``schema``; with ``either_text``, or plain text not starting with '<'."""
        if schema is None:
            return None
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        rules = json_schema_to_gbnf(json.dumps(schema))
        if either_text:
            rules = re.sub(r"(?m)^root ::=", "call ::=", rules, count=1)
            rules = "root ::= call-block | text\n" + _TEXT_RULE + rules
        return self.llama_cpp.LlamaGrammar.from_string(rules, verbose=False)

    def plan(self, body: Mapping[str, Any]) -> tuple[str, Any, bool]:
        """``(prompt, grammar, forced)`` for a request body."""
        tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
        choice = body.get("tool_choice", "auto" if tools else "none")
        fmt = body.get("response_format") or {}
        if tools and choice not in ("none", "auto"):
            name = choice["function"]["name"] if isinstance(choice, Mapping) else None
            prompt = render_prompt(body["messages"], tools, prefill=CALL_OPEN + "\n")
            return prompt, self.grammar(call_schema(tools, name), False), True
        prompt = render_prompt(body["messages"], tools)
        if tools and choice == "auto":
            return prompt, self.grammar(call_schema(tools), True), False
        if fmt.get("type") == "json_schema":
            return prompt, self.grammar(fmt.get("json_schema", {}).get("schema", {}), False), False
        if fmt.get("type") == "json_object":
            return prompt, self.grammar({"type": "object"}, False), False
        return prompt, None, False

    def answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON of one chat completion."""
        with self.lock:
            prompt, grammar, forced = self.plan(body)
            tokens = self.llm.tokenize(prompt.encode(), add_bos=False, special=True)
            limit = body.get("max_completion_tokens") or body.get("max_tokens") or 512
            if len(tokens) + limit > self.n_ctx:
                return 400, _overflow(len(tokens), limit, self.n_ctx)
            cached = _common_prefix(list(self.llm._input_ids), tokens)
            done = self.llm.create_completion(
                tokens,
                max_tokens=limit,
                temperature=float(body.get("temperature", 0.8)),
                seed=body.get("seed"),
                stop=["<|im_end|>"],
                grammar=grammar,
            )
        text = done["choices"][0]["text"]
        content, calls = parse_answer(text, forced)
        finish = "tool_calls" if calls else done["choices"][0]["finish_reason"] or "stop"
        usage = dict(done["usage"], prompt_tokens_details={"cached_tokens": cached})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return 200, {
            "id": f"chatcmpl-{time.monotonic_ns():x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.alias,
            "choices": [choice],
            "usage": usage,
        }


def _common_prefix(before: list[int], now: list[int]) -> int:
    n = 0
    for x, y in zip(before, now, strict=False):
        if x != y:
            break
        n += 1
    return n


def _overflow(prompt: int, limit: int, n_ctx: int) -> dict[str, Any]:
    message = (
        f"the request exceeds the available context size ({prompt} prompt tokens + "
        f"{limit} to generate > {n_ctx})"
    )
    kind = "exceed_context_size_error"
    error = {"code": 400, "type": kind, "message": message, "n_ctx": n_ctx}
    return {"error": {**error, "n_prompt_tokens": prompt}}


def to_events(answer: Mapping[str, Any], with_usage: bool) -> list[dict[str, Any]]:
    """A completed answer as the chunks of a stream (one delta, the finish, the usage)."""
    choice = answer["choices"][0]
    head = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if choice["message"].get("tool_calls"):
        delta["tool_calls"] = [
            dict(c, index=i) for i, c in enumerate(choice["message"]["tool_calls"])
        ]
    chunks = [
        head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if with_usage:
        chunks.append(head | {"choices": [], "usage": answer["usage"]})
    return chunks


def _no_route(path: str) -> dict[str, Any]:
    return {"error": {"message": f"no route {path}", "code": 404}}


def get(engine: ChatEngine, path: str) -> tuple[int, dict[str, Any]]:
    """The answer to ``GET path``: the window at ``/props`` and ``/v1/models``."""
    route = path.rstrip("/")
    if route == "/props":
        return 200, {"default_generation_settings": {"n_ctx": engine.n_ctx}, "n_ctx": engine.n_ctx}
    if route == "/v1/models":
        model = {"id": engine.alias, "object": "model", "owned_by": "ponder"}
        return 200, {"object": "list", "data": [model | {"max_model_len": engine.n_ctx}]}
    return 404, _no_route(path)


def post(engine: ChatEngine, path: str, raw: bytes) -> tuple[int, dict[str, Any], bool]:
    """The answer to ``POST path``, and whether it goes as a stream with usage."""
    if path.rstrip("/") != "/v1/chat/completions":
        return 404, _no_route(path), False
    try:
        body = json.loads(raw or b"{}")
        status, answer = engine.answer(body)
    except (ValueError, KeyError, TypeError) as error:
        return 400, {"error": {"message": f"bad request: {error}", "code": 400}}, False
    if status != 200 or not body.get("stream"):
        return status, answer, False
    answer["usage_in_stream"] = bool((body.get("stream_options") or {}).get("include_usage"))
    return status, answer, True


def handler(engine: ChatEngine) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``engine``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._send(*get(engine, self.path))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            status, answer, streamed = post(engine, self.path, raw)
            if streamed:
                chunks = to_events(answer, answer.pop("usage_in_stream"))
                text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                self._send(200, text.encode(), "text/event-stream")
            else:
                self._send(status, answer)

        def _send(self, status: int, body: Any, kind: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line, load the model and serve until stopped."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--model", required=True, help="the .gguf file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--n_ctx", type=int, default=4096)
    parser.add_argument("--n_threads", type=int, default=None)
    parser.add_argument("--model_alias", default="local")
    args = parser.parse_args(argv)
    engine = ChatEngine(args.model, args.n_ctx, args.model_alias, args.n_threads)
    server = ThreadingHTTPServer((args.host, args.port), handler(engine))
    server.serve_forever()


if __name__ == "__main__":
    main()
