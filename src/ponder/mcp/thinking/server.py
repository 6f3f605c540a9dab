"""An MCP server for ``sequential_thinking``, a drop-in for the reference server.

Run ``python -m ponder.mcp.thinking`` (stdio), or with ``--http HOST:PORT`` over
streamable HTTP (see `ponder.mcp.thinking.http`). By default it serves the tool as
``sequentialthinking`` with the reference server's camelCase input schema and output
shape: exactly one text item holding the payload as 2-space JSON, and ``structuredContent``
``{thoughtNumber, totalThoughts, nextThoughtNeeded, branches, thoughtHistoryLength}``;
a success has no ``isError``; capabilities are the reference's (``tools.listChanged``).
Warnings (see `ponder.tools.thinking`), naming fields by the served spelling, go in the
text item's JSON as ``warnings`` (``structuredContent`` keeps the reference's schema).
``--branch-contents CHARS`` adds ``branchContents`` (every branch's newest thoughts, up to
CHARS characters) to a branch thought's text item, so the model can compare its branches.
``--native`` serves ponder's own ``sequential_thinking`` (snake_case; result ``data``, its
warnings included, as structured content).

Differences from the reference server, on purpose: every connection (and every
streamable-HTTP session) has its own bounded state; snake_case aliases are accepted;
ambiguous coercions, empty thoughts and thoughts over the size cap are refused with one
``isError`` result listing every problem; any branch id is an opaque key; a call that
fails (even while logging) changes nothing; annotations say the tool is neither
read-only nor idempotent; the description is ponder's own, under 1024 characters;
``DISABLE_THOUGHT_LOGGING`` turns the stderr boxes off for true/1/yes/on (any case).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import re
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware as TracingMiddleware
from mcp.shared.exceptions import MCPError
from opentelemetry import trace

from ponder.mcp.thinking.fast import FastToolCall, text_result
from ponder.mcp.thinking.json_text import indented_json_without_floats
from ponder.mcp.thinking.log import is_logging_disabled, render_thought_box
from ponder.mcp.thinking.stdio import serve_stdio
from ponder.tools.thinking import (
    DESCRIPTION,
    TOOL_NAME,
    ThinkingConfig,
    ThinkingState,
    plan_call,
    thinking_data,
)
from ponder.tools.thinking_schema import FIELDS, Spelling, snake_case_parameters
from ponder.tools.thinking_state import ThoughtPlan, commit_thought

__all__ = [
    "REFERENCE_TOOL_NAME",
    "SERVER_NAME",
    "ThinkingServerOptions",
    "build_server",
    "camel_case_input_schema",
    "camel_case_text",
    "main",
]

SERVER_NAME = "ponder-sequential-thinking"
REFERENCE_TOOL_NAME = "sequentialthinking"
_COUNT = {"type": "integer", "minimum": 1, "maximum": 2**53 - 1}
_FLAG = {"type": ["boolean", "string"]}
CAMEL_DESCRIPTION = (
    DESCRIPTION.replace("thought_number", "thoughtNumber")
    .replace("total_thoughts", "totalThoughts")
    .replace("next_thought_needed", "nextThoughtNeeded")
    .replace("needs_more_thoughts", "needsMoreThoughts")
    .replace("is_revision", "isRevision")
    .replace("revises_thought", "revisesThought")
    .replace("revision_type", "revisionType")
    .replace("branch_from_thought", "branchFromThought")
    .replace("branch_id", "branchId")
)
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thoughtNumber": {"type": "number"},
        "totalThoughts": {"type": "number"},
        "nextThoughtNeeded": {"type": "boolean"},
        "branches": {"type": "array", "items": {"type": "string"}},
        "thoughtHistoryLength": {"type": "number"},
    },
    "required": [
        "thoughtNumber",
        "totalThoughts",
        "nextThoughtNeeded",
        "branches",
        "thoughtHistoryLength",
    ],
    "additionalProperties": False,
}


def camel_case_input_schema() -> dict[str, Any]:
    """The reference server's input schema (camelCase, booleans may be strings)."""
    properties = {
        "thought": {"type": "string", "description": "Your current thinking step"},
        "nextThoughtNeeded": {**_FLAG, "description": "Whether another thought is needed"},
        "thoughtNumber": {**_COUNT, "description": "Current thought number"},
        "totalThoughts": {**_COUNT, "description": "Estimated total thoughts needed"},
        "isRevision": {**_FLAG, "description": "Whether this revises previous thinking"},
        "revisesThought": {**_COUNT, "description": "Which thought is being reconsidered"},
        "branchFromThought": {**_COUNT, "description": "Branching point thought number"},
        "branchId": {"type": "string", "description": "Branch identifier"},
        "needsMoreThoughts": {**_FLAG, "description": "If more thoughts are needed"},
    }
    return {"type": "object", "properties": properties, "required": list(properties)[:4]}


@dataclass(frozen=True, slots=True)
class ThinkingServerOptions:
    """How the server names its tool, bounds its state and logs."""

    native: bool = False
    """Serve ``sequential_thinking`` (snake_case, ponder's data) instead of the reference."""
    config: ThinkingConfig = field(
        default_factory=lambda: ThinkingConfig(max_thought_chars=100_000)
    )
    max_sessions: int = 256
    """States kept per connection (one per streamable-HTTP session); least recent dropped."""
    log_thoughts: bool = True
    log_stream: TextIO | None = None
    """Where boxes go; None = ``sys.stderr``."""

    @property
    def tool_name(self) -> str:
        """The registered tool name."""
        return TOOL_NAME if self.native else REFERENCE_TOOL_NAME


class _Scopes:
    """Per-connection thinking states, keyed by HTTP session id, least recent dropped."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._states: OrderedDict[str, ThinkingState] = OrderedDict()

    def get(self, key: str) -> ThinkingState:
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
            return state
        state = self._states[key] = ThinkingState()
        while len(self._states) > self._limit:
            self._states.popitem(last=False)
        return state


def _scope_key(ctx: ServerRequestContext[Any]) -> str:
    headers = getattr(ctx.request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return str(session) if session else "connection"


def _tool(options: ThinkingServerOptions) -> types.Tool:
    if options.native:
        schema, description, output = snake_case_parameters(options.config), DESCRIPTION, None
    else:
        schema, description, output = camel_case_input_schema(), CAMEL_DESCRIPTION, OUTPUT_SCHEMA
    return types.Tool(
        name=options.tool_name,
        title="Sequential Thinking",
        description=description,
        input_schema=schema,
        output_schema=output,
        annotations=types.ToolAnnotations(
            title="Sequential Thinking",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )


def _success(
    state: ThinkingState, options: ThinkingServerOptions, plan: ThoughtPlan
) -> dict[str, Any]:
    # Counts are integers (``coerce_integer``), so the payloads hold no floats.
    if options.native:
        data = thinking_data(state, options.config, plan)
        return text_result(indented_json_without_floats(data), data)
    entry = plan.entry
    payload = {
        "thoughtNumber": entry.thought_number,
        "totalThoughts": entry.total_thoughts,
        "nextThoughtNeeded": entry.next_thought_needed,
        "branches": list(state.branches),
        "thoughtHistoryLength": state.recorded,
    }
    shown = payload
    if plan.warnings:
        shown = {**payload, "warnings": [_camel_case_warning(w) for w in plan.warnings]}
    config = options.config
    if entry.branch_id and config.include_branch_contents and state.branches:
        # What `thinking_data` reports as ``branch_contents``, read by the model.
        contents, _ = state.branch_contents_within(config.max_branch_contents_chars)
        shown = {**shown, "branchContents": contents}
    return text_result(indented_json_without_floats(shown), payload)


_CAMEL = {spec.name: spec.alias for spec in FIELDS if spec.name != spec.alias}
_SNAKE_NAME = re.compile(r"\b(" + "|".join(sorted(_CAMEL, key=len, reverse=True)) + r")\b")


def camel_case_text(text: str) -> str:
    """``text`` with the argument names in the served camelCase spelling."""
    return _SNAKE_NAME.sub(lambda found: _CAMEL[found.group(1)], text)


_camel_case_warning = functools.lru_cache(maxsize=256)(camel_case_text)
"""`camel_case_text` for warnings, which mostly repeat from call to call."""


class _ThinkingServer(Server[_Scopes]):
    """Declares ``tools.listChanged`` as the reference server does, in every protocol era."""

    _stamp: dict[str, Any] | None = None
    fast_call: FastToolCall | None = None
    """How the stdio transport may answer this server's tool calls in line."""

    def get_capabilities(self, *args: Any, **kw: Any) -> types.ServerCapabilities:
        """The derived capabilities, with the tool list declared as changeable."""
        capabilities = super().get_capabilities(*args, **kw)
        if capabilities.tools is not None:
            capabilities.tools = types.ToolsCapability(list_changed=True)
        return capabilities

    @property
    def server_info_stamp(self) -> dict[str, Any]:
        """A fresh ``serverInfo`` dump per response; a flat copy when its values are strings.

        The SDK deep-copies the dump for every response so that nested values (icons) never
        alias; this server's identity has none.
        """
        if self._stamp is None:
            stamp = super().server_info_stamp
            if not all(isinstance(value, str) for value in stamp.values()):
                return stamp
            self._stamp = stamp
        return dict(self._stamp)


def _failure(text: str) -> dict[str, Any]:
    return text_result(text, is_error=True)


def _record(
    state: ThinkingState, options: ThinkingServerOptions, args: dict[str, Any]
) -> dict[str, Any]:
    """Validate, log, then commit; any failure leaves ``state`` unchanged.

    The result is the ``CallToolResult`` in its wire spelling; the SDK validates it once.
    """
    spelling: Spelling = "snake_case" if options.native else "camelCase"
    outcome = plan_call(state, options.config, args, options.tool_name, spelling)
    if isinstance(outcome, str):
        return _failure(outcome)
    if options.log_thoughts:
        stream = options.log_stream or sys.stderr
        try:
            stream.write(render_thought_box(outcome.entry))
            stream.flush()
        except Exception as exc:
            return _failure(json.dumps({"error": str(exc), "status": "failed"}, indent=2))
    commit_thought(state, options.config, outcome)
    return _success(state, options, outcome)


def build_server(options: ThinkingServerOptions | None = None) -> Server[_Scopes]:
    """The MCP server; each connection it serves gets fresh thinking state."""
    return _build(options)


def _build(options: ThinkingServerOptions | None) -> _ThinkingServer:
    opts = options or ThinkingServerOptions(log_thoughts=not is_logging_disabled())
    tool = _tool(opts)

    @asynccontextmanager
    async def lifespan(_: Server[_Scopes]) -> AsyncIterator[_Scopes]:
        yield _Scopes(opts.max_sessions)

    async def list_tools(
        ctx: ServerRequestContext[_Scopes], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(
        ctx: ServerRequestContext[_Scopes], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        if params.name != tool.name:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Tool {params.name} not found")
        # No lock: a call runs to completion without yielding, so calls never interleave.
        state = ctx.lifespan_context.get(_scope_key(ctx))
        return _record(state, opts, dict(params.arguments or {}))

    def record_on_connection(scopes: _Scopes, arguments: dict[str, Any]) -> dict[str, Any]:
        # What ``call_tool`` does for a stdio request (no session header).
        return _record(scopes.get("connection"), opts, arguments)

    server = _ThinkingServer(
        SERVER_NAME, version=version("ponder"), lifespan=lifespan, on_list_tools=list_tools
    )
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    server.fast_call = FastToolCall(server, tool.name, record_on_connection)
    return server


def main(argv: list[str] | None = None, *, fast_path: bool = True, prog: str | None = None) -> None:
    """Serve over stdio until the client closes the connection, or over HTTP (``--http``).

    ``fast_path=False`` serves every stdio request through the SDK (tests compare the
    two); by default a 2026-07-28 connection's tool calls are answered in line.
    """
    parser = argparse.ArgumentParser(
        prog=prog or "python -m ponder.mcp.thinking",
        description="The sequential_thinking MCP server, over stdio or streamable HTTP.",
    )
    parser.add_argument("--native", action="store_true", help="serve sequential_thinking")
    parser.add_argument(
        "--max-thought-chars", type=int, default=100_000, help="the longest thought accepted"
    )
    parser.add_argument(
        "--max-history", type=int, default=1000, help="thoughts kept per session (oldest go)"
    )
    parser.add_argument("--strict", action="store_true", help="cross-field checks are errors")
    parser.add_argument(
        "--branch-contents",
        type=int,
        metavar="CHARS",
        help="a branch thought's result shows every branch's newest thoughts, up to CHARS",
    )
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp")
    parser.add_argument("--token", help="HTTP: the bearer token every request must carry")
    parser.add_argument("--allow-host", action="append", default=[], help="HTTP: a Host value")
    parser.add_argument("--allow-origin", action="append", default=[], help="HTTP: an Origin")
    args = parser.parse_args(argv)
    config = ThinkingConfig(
        max_thought_chars=args.max_thought_chars,
        max_history=args.max_history,
        strict=args.strict,
        include_branch_contents=args.branch_contents is not None,
        max_branch_contents_chars=args.branch_contents,
    )
    options = ThinkingServerOptions(
        native=args.native, config=config, log_thoughts=not is_logging_disabled()
    )
    server = _process_server(options)
    if args.http is not None:
        _main_http(server, args)
        return
    print("Sequential Thinking MCP Server running on stdio", file=sys.stderr, flush=True)
    anyio.run(serve_stdio, server, server.fast_call if fast_path else None)


def _process_server(options: ThinkingServerOptions) -> _ThinkingServer:
    """The server this process runs, with per-call costs it cannot need taken out.

    Without a configured OpenTelemetry tracer provider the SDK's tracing middleware only
    makes non-recording spans, so it is dropped (the SDK's documented opt-out). The
    objects alive after start-up (modules, schemas) are frozen out of garbage collection.
    """
    server = _build(options)
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        server.middleware = [m for m in server.middleware if not isinstance(m, TracingMiddleware)]
    gc.collect()
    gc.freeze()
    return server


def _main_http(server: Server[_Scopes], args: argparse.Namespace) -> None:
    import os

    from ponder.mcp.thinking.http import TOKEN_VARIABLE, HTTPOptions, parse_address, serve_http

    host, port = parse_address(args.http)
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    options = HTTPOptions(host, port, token, args.allow_host, args.allow_origin)
    serve_http(server, options)


if __name__ == "__main__":
    main()
