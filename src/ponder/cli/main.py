"""The ``ponder`` command: run, chat, demo, dis, serve, index, runs, replay and the MCP server.

Every command prints failures as one line with a hint on stderr and exits non-zero
(2 for misuse, 1 for a failed run, 3 for a run waiting for approval, 130 for Ctrl-C).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from rich.console import Console

from ponder._version import __version__
from ponder.agent.strategies.workflows import WORKFLOWS
from ponder.cli.chat import chat
from ponder.cli.errors import EXIT_RUN_FAILED, EXIT_USAGE
from ponder.cli.options import (
    ApiKeyOption,
    BaseUrlOption,
    ConfigOption,
    InstructionsOption,
    JsonOption,
    McpArgOption,
    McpPromptOption,
    McpResourceOption,
    ModelOption,
    OutputSchemaOption,
    RagOption,
    RecordOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
    load_output_schema,
)
from ponder.cli.programs import load_program
from ponder.cli.replaying import replay
from ponder.cli.reporting import fail, reported, show_warnings_plainly, stdout_closed
from ponder.cli.runs import (
    open_cli_store,
    print_typed_answer,
    report_outcome,
    runs_app,
    store_label,
)
from ponder.cli.serve_command import serve
from ponder.cli.session import (
    AgentOptions,
    RunOutcome,
    build_agent,
    json_stdout,
    run_with_display,
)
from ponder.cli.temporal import (
    DetachOption,
    NamespaceOption,
    TaskQueueOption,
    TemporalOption,
    exit_after_temporal,
    run_remote,
    worker,
)
from ponder.config import AgentConfig
from ponder.exceptions import UserError
from ponder.extras import require
from ponder.messages import Message
from ponder.observability.logs import configure_logging
from ponder.retrieval import FolderIndex

__all__ = ["app", "main"]

app = typer.Typer(
    name="ponder",
    help="Run ponder agents from the terminal, serve them over HTTP, and watch them think.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # plain help: flags shown without a value type, readable when piped
    rich_markup_mode=None,
)
mcp_app = typer.Typer(
    help="MCP servers that ship with ponder.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(mcp_app, name="mcp")
app.add_typer(runs_app, name="runs")
app.command()(chat)
app.command()(serve)
app.command()(worker)
app.command()(replay)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ponder {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print ponder's version and exit.",
        ),
    ] = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            envvar="PONDER_LOG_LEVEL",
            help="Log ponder's records of this level (DEBUG, INFO, WARNING, ERROR) to stderr.",
        ),
    ] = None,
) -> None:
    """Run ponder agents from the terminal, serve them over HTTP, and watch them think."""
    show_warnings_plainly()
    if log_level:
        with reported():
            configure_logging(log_level, sys.stderr)


def _run_async(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(make())


def _console() -> Console:
    return Console(highlight=False)


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")] = "",
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    as_json: JsonOption = False,
    store: StoreOption = None,
    tools: ToolsOption = None,
    rag: RagOption = None,
    mcp_prompt: McpPromptOption = None,
    mcp_arg: McpArgOption = None,
    mcp_resource: McpResourceOption = None,
    temporal: TemporalOption = None,
    task_queue: TaskQueueOption = None,
    namespace: NamespaceOption = "default",
    detach: DetachOption = False,
    instructions: InstructionsOption = None,
    output_schema: OutputSchemaOption = None,
    record: RecordOption = None,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Run an agent on TASK and show it working; with --store, checkpoint it.

    With --temporal HOST:PORT --task-queue Q the run goes to the workers of Q instead.
    With --output-schema FILE the view goes to stderr and the validated JSON to stdout.
    """
    if temporal:
        run_remote(task, temporal, task_queue, namespace, as_json, detach)
        return
    loaded: list[AgentConfig] = []
    options = AgentOptions(
        model,
        config,
        workflow,
        instructions or "",
        tools=tools,
        rag=rag,
        base_url=base_url,
        api_key=api_key,
    )
    with reported(loaded):
        if not task and mcp_prompt is None:
            raise UserError("give a TASK (or --mcp-prompt NAME)")
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        agent.record, agent.record_tools_spec = record, tools
        output = load_output_schema(output_schema) if output_schema else None
        start = _Start(task, mcp_prompt, list(mcp_arg or []), list(mcp_resource or []), output)
        with json_stdout(as_json) as out:
            outcome = _run_async(lambda: _run_stored(agent, start, store, as_json, out))
    report_outcome(outcome, store_label(store) if store else None, options, as_json=as_json)
    if output is not None and not as_json:
        print_typed_answer(outcome)
    if outcome.status == "completed" and not outcome.output.strip():
        hint = "the model gave only empty replies; try another model or run with --json"
        fail(f"error: the run ended without an answer (hint: {hint})", EXIT_RUN_FAILED)


@dataclass(frozen=True)
class _Start:
    task: str
    mcp_prompt: str | None
    mcp_args: list[str]
    mcp_resources: list[str]
    output: Any = None


async def _run_stored(
    agent: Any, start: _Start, url: str | None, as_json: bool, out: IO[str]
) -> RunOutcome:
    from ponder.cli.mcp_input import (
        TerminalElicitation,
        attach_resources,
        fetch_prompt,
        parse_prompt_args,
    )

    if agent.toolbox.mcp is not None and (url is None or sys.stdin.isatty()):
        # a stored run on a non-interactive stdin suspends on a question instead
        agent.on_elicitation(TerminalElicitation())
    task, history = start.task, list[Message]()
    store = open_cli_store(url) if url else None
    try:
        if start.mcp_prompt is not None:
            arguments = parse_prompt_args(start.mcp_args)
            task, history = await fetch_prompt(agent, start.mcp_prompt, arguments, task)
        if start.mcp_resources:
            task = await attach_resources(agent, start.mcp_resources, task)
        console = Console(highlight=False, stderr=start.output is not None)
        return await run_with_display(
            agent,
            task,
            console,
            as_json=as_json,
            out=out,
            store=store,
            history=history,
            output=start.output,
        )
    finally:
        if store is not None:
            await store.close()
        await agent.aclose()


@app.command()
def demo(
    delay: Annotated[float, typer.Option(help="Seconds the scripted model waits per request.")] = (
        0.4
    ),
    as_json: JsonOption = False,
) -> None:
    """Watch an offline scripted agent think, branch, revise, call tools and answer."""
    from ponder.cli.demo import DEMO_TASK, demo_agent

    if delay < 0:
        fail("error: --delay must be 0 or more (hint: try --delay 0.2)", EXIT_USAGE)
    with reported([]):
        agent = demo_agent(delay)
        _run_async(
            lambda: run_with_display(agent, DEMO_TASK, _console(), as_json=as_json, out=sys.stdout)
        )


@app.command()
def dis(
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="react, step-react, run, or module:attribute (a Program or a block)."),
    ] = None,
    list_only: Annotated[
        bool, typer.Option("--list", help="List the built-in workflows by name.")
    ] = False,
) -> None:
    """Disassemble workflow programs (default: every built-in one)."""
    with reported([]):
        if list_only:
            for name, (program, what) in WORKFLOWS.items():
                typer.echo(f"{name:<11} {len(program.instructions):>3} instructions  {what}")
            return
        for target in targets or list(WORKFLOWS):
            program = load_program(target)
            typer.echo(f"== {target}")
            typer.echo(program.dis())


@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="The folder of documents to index.")],
    db: Annotated[
        Path | None, typer.Option(help="Index file (default: PATH/.ponder-index.sqlite).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Index a folder for RAG mode (`ponder run --rag PATH`); re-run it to refresh."""
    with reported():
        folder = FolderIndex(path, db)
        changed = folder.refresh()
        chunks = folder.count()
    if as_json:
        summary = {"path": str(folder.root), "db": str(folder.db_path), "changed_files": changed}
        typer.echo(json.dumps({**summary, "chunks": chunks}))
        return
    typer.echo(f"indexed {folder.root}: {changed} file(s) added or changed, {chunks} chunk(s)")
    typer.echo(f"index file: {folder.db_path}")


@mcp_app.command(
    "thinking",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def mcp_thinking(ctx: typer.Context) -> None:
    """The sequential_thinking MCP server over stdio, or --http HOST:PORT (--help: options)."""
    with reported([]):
        require("mcp", "ponder mcp thinking")
        from ponder.mcp.thinking.server import main as thinking_main

        thinking_main(list(ctx.args), prog="ponder mcp thinking")


def main() -> None:
    """Entry point of the ``ponder`` script."""
    try:
        try:
            app()
        except BrokenPipeError:
            raise SystemExit(stdout_closed().exit_code) from None
    except SystemExit as done:
        exit_after_temporal(done.code if isinstance(done.code, int) else 1)
        raise


if __name__ == "__main__":
    main()
