"""A synchronous answer for the thinking server's hot request: ``tools/call`` of its tool.

On a 2026-07-28 (per-request envelope) stdio connection the SDK spends, per request, a
task, three cancel scopes, a fresh `Connection`, a context object and a validation plus
re-dump of the result; the tool itself is a fraction of that. `FastToolCall` answers the
one request that matters for throughput in line, from the raw line, with the SDK's own
checks and exactly the bytes the SDK would write:

- the line is a JSON object with exactly ``jsonrpc`` ("2.0"), ``id`` (a string or an
  integer within ±2^53), ``method`` (``tools/call``) and ``params`` (an object naming the
  served tool), parsed by pydantic-core as the SDK's transport parses it;
- the envelope passes the SDK's ``classify_inbound_request`` ladder, and ``params`` pass
  the SDK's surface validation (``validate_client_request``) and ``CallToolRequestParams``;
- the result is the tool's `text_result`, which is laid out as the SDK's surface model
  dumps it, with the ``serverInfo`` stamp, inside ``{"jsonrpc", "id", "result"}``, written
  with pydantic-core's JSON encoder (what ``model_dump_json`` uses).

Anything else (another method or tool, a bad envelope, invalid params, odd ids, extra keys,
batches, a line that does not parse) returns None and goes to the SDK unchanged, which then
answers it (usually with the error). Bad *arguments* are the tool's own ``isError`` result,
answered here like any other call. The fast path is not used when the server has
middleware (tracing) or a cache hint for ``tools/call``, which change the SDK's answer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.runner import modern_error_data
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp_types import methods
from pydantic_core import from_json, to_json

__all__ = ["Answer", "FastToolCall", "Record", "text_result"]

logger = logging.getLogger(__name__)

Answer = Callable[[bytes], bytes | None]
"""A bound fast path: the reply line for a request line, or None to leave it to the SDK."""
Record = Callable[[Any, dict[str, Any]], dict[str, Any]]
"""``(lifespan state, arguments) -> CallToolResult``, made by `text_result`."""

_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_ARGUMENT_TYPES = (dict, type(None))
_MAX_ID = 2**53
_METHOD = "tools/call"
_STAMP_KEY = types.SERVER_INFO_META_KEY


def text_result(
    text: str, structured: dict[str, Any] | None = None, *, is_error: bool = False
) -> dict[str, Any]:
    """A ``CallToolResult`` of one text item, laid out as the SDK's surface model dumps it.

    The surface ``CallToolResult`` dumps ``content``, ``isError``, ``resultType``,
    ``structuredContent`` in that order, each text item as ``{"text", "type"}``, and
    leaves out what is None. The SDK's handler path validates the same dict.
    """
    result: dict[str, Any] = {
        "content": [{"text": text, "type": "text"}],
        "isError": is_error,
        "resultType": "complete",
    }
    if structured is not None:
        result["structuredContent"] = structured
    return result


@dataclass(frozen=True, slots=True)
class FastToolCall:
    """How to answer ``tools/call`` of ``tool_name`` on a modern stdio connection."""

    server: Server[Any]
    tool_name: str
    record: Record
    """The same function the SDK handler runs for this tool, state first."""

    def bind(self, lifespan_state: Any) -> Answer | None:
        """The fast path for one connection, or None when the SDK's answer could differ."""
        if self.server.middleware or _METHOD in self.server.cache_hints:
            return None
        if self.server.get_request_handler(_METHOD) is None:
            return None
        return functools.partial(self._answer, lifespan_state, _KnownEnvelopes())

    def _answer(self, state: Any, envelopes: _KnownEnvelopes, line: bytes) -> bytes | None:
        body = _request_body(line)
        if body is None:
            return None
        params = body["params"]
        arguments = params.get("arguments")
        if params.get("name") != self.tool_name or type(arguments) not in _ARGUMENT_TYPES:
            return None  # another tool, or arguments the SDK refuses (INVALID_PARAMS)
        if envelopes.version(body) is None:
            return None
        request_id = body["id"]
        try:
            # The state may change from here on: the call is answered here, whatever happens.
            result = self.record(state, dict(arguments or {}))
            wire = {**result, "_meta": {_STAMP_KEY: self.server.server_info_stamp}}
            return to_json({"jsonrpc": "2.0", "id": request_id, "result": wire}) + b"\n"
        except Exception as exc:
            # As the SDK's modern entry maps a raising handler: logged, a generic error sent.
            logger.exception("fast tools/call handler raised")
            reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(exc))
            return reply.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def _request_body(line: bytes) -> dict[str, Any] | None:
    """The line as a plain ``tools/call`` request object with a simple id, else None."""
    if b'"tools/call"' not in line:
        return None
    try:
        body = from_json(line, allow_inf_nan=False)
    except ValueError:
        return None
    if type(body) is not dict or body.keys() != _REQUEST_KEYS:
        return None
    if body["jsonrpc"] != "2.0" or body["method"] != _METHOD or type(body["params"]) is not dict:
        return None
    request_id = body["id"]
    if type(request_id) is int:
        return body if -_MAX_ID <= request_id <= _MAX_ID else None
    return body if type(request_id) is str else None


class _KnownEnvelopes:
    """The SDK's checks of a call's envelope, remembered per ``params`` less ``arguments``.

    The envelope ladder (``classify_inbound_request`` without headers) reads only
    ``params._meta``, and the SDK's surface validation and ``CallToolRequestParams`` type
    ``arguments`` as ``dict[str, Any] | None``, so neither outcome depends on what an
    arguments object holds. Params equal, as JSON (``1``, ``1.0`` and ``true`` differ),
    to ones that passed, except for their ``arguments`` object, pass too and skip the
    checks: a client sends the same envelope on every call.
    """

    LIMIT = 64

    def __init__(self) -> None:
        self._versions: dict[bytes, str] = {}

    def version(self, body: dict[str, Any]) -> str | None:
        """The protocol version when the SDK accepts the call's envelope, else None."""
        params = body["params"]
        key = to_json({k: v for k, v in params.items() if k != "arguments"})
        version = self._versions.get(key)
        if version is not None:
            return version
        route = classify_inbound_request(body)
        if not isinstance(route, InboundModernRoute):
            return None
        try:
            methods.validate_client_request(_METHOD, route.protocol_version, params)
            types.CallToolRequestParams.model_validate(params, by_name=False)
        except (KeyError, ValueError):
            return None
        if len(self._versions) >= self.LIMIT:
            self._versions.clear()
        self._versions[key] = route.protocol_version
        return route.protocol_version
