"""`MCPToolset`: the tools of several MCP servers as ponder `Tool` objects.

Sessions are pooled for the toolset's lifetime and started lazily and concurrently by
`MCPToolset.tools`. A tool name offered by two servers becomes ``<server>__<tool>`` on
both (reported in `MCPToolset.renamed` and an ``mcp.tools_renamed`` event). A failing
server yields error results for its calls and is reconnected with backoff.

Runs lend the toolset their event sink, model and answering callbacks with `bind`. Each
run's calls use a session no other run uses meanwhile (`ponder.mcp.pool`), so a server's
logs, sampling and elicitation requests reach the run whose call caused them, and
progress the call that sent its token (see `ponder.mcp.binding`). Servers that offer
resources add the two resource tools.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import mcp_types as types

from ponder.events import McpEvent
from ponder.exceptions import ToolError, UserError
from ponder.mcp.binding import Bindings, RunBinding, to_mcp_event
from ponder.mcp.client import ClientCallbacks, EventSink, MCPServerConnection
from ponder.mcp.config import MCPServerConfig, unique_names
from ponder.mcp.content import to_tool_result
from ponder.mcp.elicitation import answer_elicitation
from ponder.mcp.pool import SessionPool
from ponder.mcp.resources import resource_tools
from ponder.mcp.sampling import answer_sampling
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = ["MCPToolset"]

_EXECUTOR_MARGIN = 5.0
"""Extra seconds on `Tool.timeout` so this module's own, clearer timeout fires first."""


class MCPToolset:
    """The tools of a set of MCP servers, with pooled sessions."""

    def __init__(
        self,
        servers: Sequence[MCPServerConfig],
        *,
        call_timeout: float = 60.0,
        init_timeout: float = 20.0,
        on_event: EventSink | None = None,
        sampling: bool = True,
        elicitation: bool = True,
        roots: Sequence[str] = (),
    ) -> None:
        """Pool sessions to ``servers``; offer sampling, elicitation and ``roots`` to them.

        Sampling and elicitation are answered by the bound runs; ``roots`` are paths or
        ``file://`` URIs.
        """
        if call_timeout <= 0 or init_timeout <= 0:
            raise UserError("MCPToolset: call_timeout and init_timeout must be positive")
        names = unique_names([s.name for s in servers])
        self.servers = [
            s.model_copy(update={"name": n}) for s, n in zip(servers, names, strict=True)
        ]
        self.call_timeout = call_timeout
        self.on_event = on_event
        self.errors: dict[str, str] = {}
        """Server name → why it contributes no tools (failed to start or to list)."""
        self.renamed: dict[str, tuple[str, str]] = {}
        """Exposed tool name → (server, original tool name), for names offered twice."""
        self.bindings = Bindings()
        self._roots = [_to_root(r) for r in roots]
        self._offer = (sampling, elicitation)
        self._init_timeout = init_timeout
        self._pools = {s.name: SessionPool(partial(self._open, s)) for s in self.servers}
        self._connections = {name: pool.home for name, pool in self._pools.items()}
        self._listed: dict[str, list[types.Tool]] = {s.name: [] for s in self.servers}
        self._tools: list[Tool] | None = None
        self._closed = False

    async def __aenter__(self) -> MCPToolset:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def connections(self) -> dict[str, MCPServerConnection]:
        """The first pooled session of each server, by name (it lists the tools)."""
        return dict(self._connections)

    @contextmanager
    def bind(self, binding: RunBinding) -> Iterator[RunBinding]:
        """Route the servers' traffic for ``binding``'s run to it while the block runs.

        The run keeps the session each server lends it until the block ends.
        """
        with self.bindings.bound(binding):
            try:
                yield binding
            finally:
                for pool in self._pools.values():
                    pool.give_back(binding.run_id)

    async def start(self) -> None:
        """Open the toolset; servers connect lazily on the first `tools()`."""
        if self._closed:
            raise UserError("MCPToolset: a closed toolset cannot be started again")

    async def close(self) -> None:
        """Close every session and stop every stdio server process."""
        self._closed = True
        await asyncio.gather(*(pool.close() for pool in self._pools.values()))

    async def tools(self) -> list[Tool]:
        """The tools of every reachable server, names unique; cheap when nothing changed.

        Servers whose list is stale (never listed, `tools/list_changed`, reconnected) are
        (re)listed concurrently; a server that fails is reported in `errors`.
        """
        if self._closed:
            raise UserError("MCPToolset: the toolset is closed")
        stale = [c for c in self._connections.values() if c.tools_stale]
        if stale or self._tools is None:
            await asyncio.gather(*(self._refresh(c) for c in stale))
            self._tools = self._build_tools() + resource_tools(self._connections, self._session_for)
        return list(self._tools)

    async def _refresh(self, connection: MCPServerConnection) -> None:
        try:
            listed = await connection.list_tools()
        except ToolError as exc:
            known = connection.name in self.errors
            self.errors[connection.name] = str(exc)
            if not known:  # once per outage: the next rounds' retries say nothing new
                self._emit(
                    {"kind": "mcp.server_failed", "server": connection.name, "error": str(exc)}
                )
            return
        self.errors.pop(connection.name, None)
        self._listed[connection.name] = listed
        self._emit({"kind": "mcp.tools_listed", "server": connection.name, "count": len(listed)})

    def _build_tools(self) -> list[Tool]:
        counts = Counter(t.name for listed in self._listed.values() for t in listed)
        renamed: dict[str, tuple[str, str]] = {}
        taken: set[str] = set()
        tools: list[Tool] = []
        for server, listed in self._listed.items():
            for spec in listed:
                name = spec.name if counts[spec.name] == 1 else f"{server}__{spec.name}"
                name = _free_name(name, taken)
                if name != spec.name:
                    renamed[name] = (server, spec.name)
                taken.add(name)
                tools.append(self._to_tool(server, spec, name))
        if renamed != self.renamed and renamed:
            mapping = {new: f"{srv}/{old}" for new, (srv, old) in renamed.items()}
            self._emit({"kind": "mcp.tools_renamed", "renamed": mapping})
        self.renamed = renamed
        return tools

    def _to_tool(self, server: str, spec: types.Tool, name: str) -> Tool:
        timeout = self._connections[server].config.timeout or self.call_timeout
        parameters = dict(spec.input_schema)
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})

        async def call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
            return await self._call(server, spec.name, ctx, args, timeout)

        return Tool(
            name=name,
            description=spec.description or spec.title or f"{spec.name} (MCP server {server})",
            parameters=parameters,
            function=call,
            timeout=timeout + _EXECUTOR_MARGIN,
            metadata={"mcp_server": server, "mcp_tool": spec.name},
        )

    async def _call(
        self, server: str, tool: str, ctx: ToolContext, args: dict[str, Any], timeout: float
    ) -> ToolResult:
        if self._closed:
            return ToolResult.fail("the MCP toolset is closed")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            # the SDK calls this for the progress token of this call only
            details = {"progress": progress, "total": total, "message": message}
            raw = {"kind": "mcp.progress", "server": server, "tool": tool, "call_id": ctx.call_id}
            self._emit({**raw, **details}, holder=ctx.run_id)

        try:
            with self._session_for(server, ctx) as connection:
                result = await connection.call_tool(tool, args, timeout=timeout, progress=progress)
        except ToolError as exc:
            return ToolResult.fail(str(exc), data={"mcp_server": server, "mcp_tool": tool})
        return to_tool_result(result)

    @contextmanager
    def _session_for(self, server: str, ctx: ToolContext) -> Iterator[MCPServerConnection]:
        """The session ``ctx``'s run uses on ``server``, with its call marked in flight."""
        is_bound = self.bindings.get(ctx.run_id) is not None
        with (
            self._pools[server].lent(ctx.run_id, hold=is_bound) as connection,
            self.bindings.calling(server, ctx.run_id, ctx.call_id),
        ):
            yield connection

    def _open(self, config: MCPServerConfig, slot: int) -> MCPServerConnection:
        """A new session to ``config``'s server; what arrives on it goes to its holder."""

        def holder() -> str | None:
            return self._pools[config.name].holder(slot)

        def emit(event: dict[str, Any]) -> None:
            if event.get("kind") == "mcp.tools_changed":  # tools are listed on the home session
                self._pools[config.name].home.tools_stale = True
            self._emit(event, holder=holder())

        return MCPServerConnection(
            config,
            init_timeout=self._init_timeout,
            emit=emit,
            callbacks=self._callbacks(config.name, holder),
        )

    def _emit(self, event: dict[str, Any], *, holder: str | None = None) -> None:
        """An event for ``on_event``, and for the run ``holder`` (see `Bindings.deliver`)."""
        if self.on_event is not None:
            self.on_event(event)
        typed = to_mcp_event(event)
        if typed is not None:
            self.bindings.deliver(holder, typed)

    def _callbacks(self, server: str, holder: Callable[[], str | None]) -> ClientCallbacks:
        bindings = self.bindings

        def deliver_to(asking: RunBinding | None) -> Callable[[str, McpEvent], None]:
            """Where a request's events go: the run that answers it, else no run."""
            run_id = asking.run_id if asking is not None else None

            def deliver(server: str, event: McpEvent) -> None:
                if self.on_event is not None:
                    self.on_event({"kind": f"mcp.{event.type}", "server": server, **event.data})
                bindings.deliver(run_id, event)

            return deliver

        async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
            asking = bindings.asking(server, holder())
            return await answer_sampling(asking, server, params, deliver_to(asking))

        async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
            asking = bindings.asking(server, holder())
            return await answer_elicitation(asking, server, params, deliver_to(asking))

        async def list_roots(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=self._roots)

        offer_sampling, offer_elicitation = self._offer
        return ClientCallbacks(
            sampling=sampling if offer_sampling else None,
            elicitation=elicitation if offer_elicitation else None,
            list_roots=list_roots if self._roots else None,
        )


def _to_root(root: str) -> types.Root:
    """A ``file://`` root from a path (made absolute) or a ``file://`` URI."""
    if root.startswith("file://"):
        return types.Root(uri=root)
    path = Path(root).expanduser().resolve()
    return types.Root(uri=path.as_uri(), name=path.name or str(path))


def _free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... when an earlier tool already holds it."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate
