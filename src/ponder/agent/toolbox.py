"""`Toolbox`: the tools an agent offers — its own, the thinking tools, and MCP servers'.

MCP sessions (``agent_mcp_client_enable`` / ``agent_mcp_server_scripts``) are pooled for
the agent's lifetime, connected lazily at the first run, and closed by `Toolbox.close`.
The registry is rebuilt only when a server's tool list changed. Each run binds itself
(`Toolbox.bind`) so that the servers' events, sampling and elicitation reach it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import cache
from typing import TYPE_CHECKING, Any

from ponder.agent.run.context import RunTools
from ponder.config import AgentConfig
from ponder.exceptions import UserError
from ponder.models import resolve_model
from ponder.tools import builtin
from ponder.tools.decorator import tool
from ponder.tools.executor import ToolExecutor
from ponder.tools.registry import ToolRegistry
from ponder.tools.schema import describe_function, is_kept
from ponder.tools.thinking import ThinkingConfig, sequential_thinking_tool
from ponder.tools.todo import todo_write_tool
from ponder.tools.tool import Tool

if TYPE_CHECKING:
    from ponder.mcp import MCPToolset
    from ponder.mcp.binding import ElicitationHandler, RunBinding
    from ponder.models.base import Model

__all__ = ["RESERVED", "Toolbox", "as_tool"]


_WRAPPED: weakref.WeakKeyDictionary[Callable[..., Any], Tool] = weakref.WeakKeyDictionary()


def as_tool(item: Tool | Callable[..., Any]) -> Tool:
    """A `Tool`, wrapping a plain function with ``@tool``.

    A top-level function is wrapped once and its tool reused while its schema is (see
    `describe_function`), as if it had been decorated.
    """
    if isinstance(item, Tool):
        return item
    kept = _WRAPPED.get(item) if is_kept(item) else None
    if kept is not None and kept.parameters is describe_function(item, name=kept.name).parameters:
        return kept
    made = tool(item)
    if made.description.strip() and is_kept(item):  # an undescribed one warns every time
        _WRAPPED[item] = made
    return made


def thinking_tools(config: AgentConfig, taken: set[str]) -> list[Tool]:
    """``sequential_thinking`` and ``todo_write`` as the config enables them."""
    found: list[Tool] = []
    if config.tool_calling_mode != "agent":
        return found
    if config.enable_thinking_tool and "sequential_thinking" not in taken:
        found.append(
            _thinking_tool(
                config.thought_max_chars,
                config.thinking_branch_contents,
                config.thinking_branch_contents_max_chars,
            )
        )
    if config.enable_todo_tool and "todo_write" not in taken:
        found.append(_todo_tool())
    return found


RESERVED = (
    builtin.THINK_AND_REASON,
    builtin.PROCESSING_MESSAGE,
    builtin.AGENT_STOP,
    builtin.VERIFY_REASONING,
    builtin.UPDATE_STEP,
)
"""The names of the built-ins a run's loop offers and handles itself."""


def _refuse_reserved(tools: Sequence[Tool]) -> None:
    """`UserError` for a tool named like a built-in: the built-in would replace it."""
    for item in tools:
        if item.name in RESERVED:
            raise UserError(
                f"tool {item.name!r} has the name of a ponder built-in ({', '.join(RESERVED)}); "
                f"the run would offer the built-in instead: rename the tool, e.g. "
                f"@tool(name='my_{item.name}')"
            )


@cache
def _thinking_tool(max_chars: int, branch_contents: bool, branch_max_chars: int | None) -> Tool:
    """One tool per set of limits, shared by the agents: each run keeps its own state."""
    limits = ThinkingConfig(
        max_thought_chars=max_chars,
        include_branch_contents=branch_contents,
        max_branch_contents_chars=branch_max_chars,
    )
    return sequential_thinking_tool(limits)


@cache
def _todo_tool() -> Tool:
    return todo_write_tool()


class Toolbox:
    """Builds the registry a run uses; owns the agent's MCP sessions."""

    def __init__(self, config: AgentConfig, tools: Sequence[Tool | Callable[..., Any]]) -> None:
        own = [as_tool(t) for t in tools]
        _refuse_reserved(own)
        self.base = [*own, *thinking_tools(config, {t.name for t in own})]
        self.mcp: MCPToolset | None = None
        if config.agent_mcp_client_enable and config.agent_mcp_server_scripts:
            from ponder.mcp import MCPToolset, parse_server_specs

            specs = parse_server_specs(list(config.agent_mcp_server_scripts))
            self.mcp = MCPToolset(
                specs,
                call_timeout=config.tool_timeout,
                sampling=config.mcp_sampling_limit > 0,
                roots=config.mcp_roots,
            )
        self.config = config
        self.elicitation: ElicitationHandler | None = None
        """Answers the servers' elicitation requests (see `on_elicitation`)."""
        self._registry = ToolRegistry(self.base)
        self._mcp_tools: list[Tool] = []
        self._executor: ToolExecutor | None = None
        self._static: RunTools | None = None
        self.sampling_model: Model | None = None
        """The model that answers MCP sampling; None = ``mcp_sampling_model`` or the run's."""

    def on_elicitation(self, handler: ElicitationHandler) -> ElicitationHandler:
        """Register the coroutine function that answers MCP elicitation; returns it."""
        self.elicitation = handler
        return handler

    def bind(self, run_id: str, model: Model) -> AbstractContextManager[RunBinding | None]:
        """Bind a run to the MCP servers for the block (None when there are none)."""
        if self.mcp is None:
            return _UNBOUND  # shared: a run without MCP servers allocates nothing here
        return self._bind(run_id, model)

    @contextmanager
    def _bind(self, run_id: str, model: Model) -> Iterator[RunBinding | None]:
        from ponder.mcp.binding import RunBinding  # runs with MCP servers only

        assert self.mcp is not None

        binding = RunBinding(
            run_id=run_id,
            model=self._sampler(model),
            sampling_limit=self.config.mcp_sampling_limit,
            elicit=self.elicitation,
        )
        with self.mcp.bind(binding):
            yield binding

    def _sampler(self, model: Model) -> Model:
        spec = self.config.mcp_sampling_model
        if self.sampling_model is None and spec is not None:
            config = self.config
            self.sampling_model = resolve_model(
                spec, api_key=config.api_key, base_url=config.base_url
            )
        return self.sampling_model or model

    @property
    def registry(self) -> ToolRegistry:
        """The registry as of the last `refresh`."""
        return self._registry

    async def refresh(self) -> ToolRegistry:
        """The registry, with the MCP servers' current tools (connecting on first use)."""
        if self.mcp is None:
            return self._registry
        tools = await self.mcp.tools()
        if tools != self._mcp_tools:
            self._mcp_tools = list(tools)
            self._registry = ToolRegistry([*self.base, *tools])
        return self._registry

    async def current(self) -> tuple[ToolRegistry, ToolExecutor]:
        """The registry after `refresh`, and the executor that runs its tools."""
        registry = await self.refresh()
        executor = self._executor
        if executor is None or executor.registry is not registry:
            # one executor per tool set: per-tool concurrency limits hold across runs
            executor = self._executor = ToolExecutor(
                registry,
                default_timeout=self.config.tool_timeout,
                max_output_chars=self.config.tool_output_max_chars,
            )
        return registry, executor

    def static_tools(self, registry: ToolRegistry, executor: ToolExecutor) -> RunTools:
        """The tools of a run whose set never changes (no MCP servers, no external tools).

        One object for all such runs of the current tool set: a waiting run keeps no copy.
        """
        found = self._static
        if found is None or found.registry is not registry or found.executor is not executor:
            found = self._static = RunTools(registry, executor)
        return found

    async def close(self) -> None:
        """Close the MCP sessions (stdio servers exit)."""
        if self.mcp is not None:
            await self.mcp.close()


_UNBOUND: AbstractContextManager[None] = nullcontext()
