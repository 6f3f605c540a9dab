"""``ponder replay FILE``: run a recorded cassette again offline and report divergences.

The agent is rebuilt from the cassette (its config, instructions, workflow and prompt);
options override what they name, so a changed prompt or program shows up as the
first divergence with a diff. Tools that are not ponder's own answer from the cassette,
or run for real with ``--live-tools`` (loaded from ``--tools`` or the recorded spec).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ponder.agent import Agent, RunResult
from ponder.cli.errors import EXIT_RUN_FAILED
from ponder.cli.options import (
    InstructionsOption,
    JsonOption,
    ToolsOption,
    WorkflowOption,
    load_tools,
)
from ponder.cli.reporting import reported
from ponder.config import AgentConfig
from ponder.exceptions import ReplayDivergence, UserError
from ponder.messages import messages_from_json
from ponder.replay import Cassette, ReplayModel, load_cassette
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = ["replay"]

LiveToolsOption = Annotated[
    bool,
    typer.Option(
        "--live-tools", help="Run the tools for real instead of replaying their recorded results."
    ),
]


def _recorded_tool(definition: Any) -> Tool:
    async def unrecorded(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        return ToolResult.fail(f"tool {ctx.tool_name!r}: this call was not recorded")

    return Tool(
        name=definition.name,
        description=definition.description,
        parameters=definition.parameters,
        function=unrecorded,
        strict=definition.strict,
    )


def _config(cassette: Cassette, workflow: str | None, live_tools: bool) -> AgentConfig:
    values = dict(cassette.config)
    values.pop("model", None)
    if workflow:
        values["agent_workflow"] = workflow
    if not live_tools:
        values["agent_mcp_client_enable"] = False  # the MCP tools answer from the cassette
    return AgentConfig.from_mapping(values)


def replay_agent(
    cassette: Cassette,
    *,
    workflow: str | None = None,
    instructions: str | None = None,
    tools: str | None = None,
    live_tools: bool = False,
) -> Agent:
    """The recorded agent, answering from ``cassette``; the arguments override it."""
    config = _config(cassette, workflow, live_tools)
    if live_tools:
        spec = tools or cassette.tools_spec
        offered: list[Any] = load_tools(spec) if spec else []
    else:
        offered = [_recorded_tool(d) for d in cassette.tools]
    model = ReplayModel(cassette, live_tools=live_tools)
    chosen = cassette.instructions if instructions is None else instructions
    return Agent(model, tools=offered, instructions=chosen, config=config)


def _summary(cassette: Cassette, model: ReplayModel, result: RunResult) -> dict[str, Any]:
    return {
        "status": "same",
        "requests": model.requests,
        "tool_calls": len(cassette.tool_calls),
        "nodes": len(cassette.trace),
        "output": result.output,
        "stop_reason": result.stop_reason,
    }


def _report_divergence(error: ReplayDivergence, as_json: bool) -> None:
    if as_json:
        detail = {"what": error.what, "index": error.index, "message": str(error)}
        typer.echo(json.dumps({"status": "diverged", **detail, "diff": error.diff}))
    else:
        console = Console(highlight=False, soft_wrap=True)
        console.print(f"✗ {error}", markup=False)
        if error.diff:
            console.print(error.diff, markup=False)
    raise typer.Exit(EXIT_RUN_FAILED)


def replay(
    file: Annotated[Path, typer.Argument(help="The cassette (from `ponder run --record`).")],
    task: Annotated[
        str | None, typer.Option("--task", help="Replay with another task than the recorded one.")
    ] = None,
    workflow: WorkflowOption = None,
    instructions: InstructionsOption = None,
    tools: ToolsOption = None,
    live_tools: LiveToolsOption = False,
    as_json: JsonOption = False,
) -> None:
    """Run a recorded cassette again offline; report the first divergence (exit 1) if any."""
    with reported():
        cassette = load_cassette(file)
        if tools and not live_tools:
            raise UserError("--tools needs --live-tools (recorded tool results are replayed)")
        agent = replay_agent(
            cassette,
            workflow=workflow,
            instructions=instructions,
            tools=tools,
            live_tools=live_tools,
        )
        model = agent.model
        assert isinstance(model, ReplayModel)
        history = messages_from_json(cassette.history)
        prompt = cassette.prompt if task is None else task
        try:
            result = asyncio.run(agent.run(prompt, message_history=history, run_id=cassette.run_id))
        except ReplayDivergence as error:
            _report_divergence(error, as_json)
            return
    summary = _summary(cassette, model, result)
    if as_json:
        typer.echo(json.dumps(summary, ensure_ascii=False))
        return
    typer.echo(
        f"✓ replayed {summary['requests']} requests, {summary['tool_calls']} tool calls and "
        f"{summary['nodes']} VM steps: no divergence"
    )
    typer.echo(f"answer: {result.output}")
