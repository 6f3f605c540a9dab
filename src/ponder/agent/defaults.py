"""What an agent derives from its configuration when it is built.

Its config, the strategy its runs use, the output spec of its typed answers, the recipe
stored with each run, and the warning about tools a RAG agent never offers. `Agent`
imports this module when the first agent is built, and with it what runs need.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import TYPE_CHECKING, Any

from ponder.agent.output import OutputSpec
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.chat import NoActionStrategy
from ponder.agent.strategies.react import ReActStrategy
from ponder.agent.subagent import check_no_cycle
from ponder.agent.toolbox import Toolbox
from ponder.config import DEFAULT_THOUGHT_MODE, AgentConfig, ConfigWarning
from ponder.exceptions import UserError
from ponder.models.providers import profile_of

if TYPE_CHECKING:
    from ponder.agent.agent import Agent

__all__ = [
    "agent_config",
    "check_strategy",
    "default_recipe",
    "default_strategy",
    "output_spec",
    "toolbox_for",
    "warn_unoffered_tools",
]


@cache
def _default_config() -> AgentConfig:
    return AgentConfig()  # frozen, so every agent built without a config shares it


@cache
def _default_config_in(mode: str, keeps_results: bool) -> AgentConfig:
    return _default_config().replace(agent_thought_mode=mode, answer_keeps_results=keeps_results)


def agent_config(
    config: AgentConfig | None, overrides: dict[str, Any], model: Any = None
) -> AgentConfig:
    """``config`` (else the defaults) with ``overrides`` applied and validated.

    A thought mode neither sets comes from ``model``'s provider profile (else the config's
    ``model``'s), or is ponder's default; so does ``answer_keeps_results`` (on for a local
    server's profile).
    """
    base = config or _default_config()
    changes = dict(overrides)
    no_mode = changes.get("agent_thought_mode", base.agent_thought_mode) is None
    no_keeps = changes.get("answer_keeps_results", base.answer_keeps_results) is None
    if no_mode or no_keeps:
        named = model if model is not None else changes.get("model", base.model)
        profile = profile_of(named)
        mode = profile.thought_mode if profile and profile.thought_mode else DEFAULT_THOUGHT_MODE
        keeps = bool(profile and profile.local)
        if base is _default_config() and not overrides:
            return _default_config_in(mode, keeps)
        if no_mode:
            changes["agent_thought_mode"] = mode
        if no_keeps:
            changes["answer_keeps_results"] = keeps
    return base.replace(**changes) if changes else base


def output_spec(output_type: Any) -> OutputSpec | None:
    """The spec of ``output_type``; None for a plain text answer (no type, or ``str``)."""
    if isinstance(output_type, OutputSpec):
        return output_type
    return None if output_type is None or output_type is str else OutputSpec(output_type)


def toolbox_for(agent: Agent[Any], config: AgentConfig, tools: list[Any]) -> Toolbox:
    """The toolbox of ``agent``; `UserError` when its sub-agents form a cycle."""
    toolbox = Toolbox(config, tools)
    check_no_cycle(agent, toolbox.base)
    return toolbox


def default_strategy(config: AgentConfig) -> type[AgentStrategy]:
    """The strategy ``config`` asks for (``agent_strategy``, ``tool_calling_mode``, ...)."""
    if config.agent_strategy == "hybrid-react":
        warnings.warn(
            "agent_strategy 'hybrid-react' is deprecated; running 'react'. Use "
            "agent_workflow = 'step-react' for structured reasoning.",
            DeprecationWarning,
            stacklevel=3,
        )
    _refuse_step_react_without_tools(config)
    if config.agent_strategy == "no-action" or config.tool_calling_mode == "none":
        return NoActionStrategy
    if config.tool_calling_mode == "rag":
        from ponder.agent.strategies.rag import RagStrategy

        return RagStrategy
    if config.agent_workflow == "step-react":
        from ponder.agent.strategies.step_react.strategy import StepReActStrategy

        return StepReActStrategy
    return ReActStrategy


def _refuse_step_react_without_tools(config: AgentConfig) -> None:
    """`UserError` for step-react where no tool loop runs (chat, RAG or no-action)."""
    if config.agent_workflow != "step-react":
        return
    if config.tool_calling_mode != "agent":
        clash = f"tool_calling_mode = {config.tool_calling_mode!r}"
    elif config.agent_strategy == "no-action":
        clash = "agent_strategy = 'no-action'"
    else:
        return
    raise UserError(
        f"agent_workflow = 'step-react' runs its steps with tools, which {clash} does not "
        "offer: set tool_calling_mode = 'agent', or leave agent_workflow as 'react'"
    )


def check_strategy(strategy: type[AgentStrategy], config: AgentConfig) -> None:
    """`UserError` for a strategy no workflow can drive (see `program_for`).

    Also for ``enable_reflection`` with a strategy that runs no tool loop (chat, RAG).
    """
    category = strategy.get_category()
    if category == "step":
        from ponder.agent.strategies.workflows import program_for

        program_for(strategy)
    if config.enable_reflection and category in ("chat", "rag"):
        raise UserError(
            f"enable_reflection checks the agent_stop of a tool loop, which {_loopless(config)} "
            "does not run: set tool_calling_mode = 'agent', or enable_reflection = false"
        )


def _loopless(config: AgentConfig) -> str:
    """The setting that picked a strategy without a tool loop, as the user wrote it."""
    if config.tool_calling_mode != "agent":
        return f"tool_calling_mode = {config.tool_calling_mode!r}"
    if config.agent_strategy == "no-action":
        return "agent_strategy = 'no-action'"
    return "the given strategy"


def warn_unoffered_tools(
    strategy: type[AgentStrategy], config: AgentConfig, toolbox: Toolbox
) -> None:
    """RAG over an index offers no tools: say so when the agent has some."""
    if strategy.get_category() != "rag":
        return
    from ponder.agent.strategies.rag import RagStrategy

    if not issubclass(strategy, RagStrategy) or not strategy.has_index(config.rag_index_path):
        return
    names = [t.name for t in toolbox.base]
    if toolbox.mcp is not None:
        names.append("the MCP servers' tools")
    if names:
        warnings.warn(
            f"RAG mode answers from its index and offers no tools; not offered: "
            f"{', '.join(names)} (leave rag_index_path unset to retrieve with the tools)",
            ConfigWarning,
            stacklevel=3,
        )


def default_recipe(model: Any, config: AgentConfig) -> dict[str, Any]:
    """How an agent of ``model`` and ``config`` was built: model, workflow, MCP servers."""
    scripts = config.agent_mcp_server_scripts if config.agent_mcp_client_enable else ()
    return {
        "model": model if isinstance(model, str) else getattr(model, "name", None),
        "workflow": config.agent_workflow,
        # a tuple: a run's copy of the recipe then holds only atoms, which the collector skips
        "mcp_servers": tuple(_server_label(spec) for spec in scripts),
    }


def _server_label(spec: str | dict[str, Any]) -> str:
    """An MCP server entry as the recipe records it: no environment, headers or secrets."""
    if isinstance(spec, str):
        return spec
    found = spec.get("name") or spec.get("url") or spec.get("command") or "server"
    return str(found)
