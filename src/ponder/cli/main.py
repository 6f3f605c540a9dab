"""The ``ponder`` command: run, chat, demo, dis, serve, index, runs and the MCP server.

Every command prints failures as one line with a hint on stderr and exits non-zero
(2 for misuse, 1 for a failed run, 3 for a run waiting for approval, 130 for Ctrl-C).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from rich.console import Console

from ponder.cli.errors import EXIT_USAGE
from ponder.cli.options import (
    ConfigOption,
    InstructionsOption,
    JsonOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
    import_attribute,
)
from ponder.cli.reporting import fail, reported
from ponder.cli.runs import open_cli_store, report_outcome, runs_app, store_label
from ponder.cli.session import (
    AgentOptions,
    ChatSession,
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

__all__ = ["app", "main"]

app = typer.Typer(
    name="ponder",
    help="Run ponder agents from the terminal, serve them over HTTP, and watch them think.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
mcp_app = typer.Typer(help="MCP servers that ship with ponder.", no_args_is_help=True)
app.add_typer(mcp_app, name="mcp")
app.add_typer(runs_app, name="runs")
app.command()(worker)
RagOption = Annotated[
    Path | None,
    typer.Option("--rag", help="Answer from this folder of documents (RAG mode, no tools)."),
]


def _print_version(value: bool) -> None:
    if value:
        from ponder import __version__

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
) -> None:
    """Run ponder agents from the terminal, serve them over HTTP, and watch them think."""


def _run_async(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(make())


def _console() -> Console:
    return Console(highlight=False)


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    as_json: JsonOption = False,
    store: StoreOption = None,
    tools: ToolsOption = None,
    rag: RagOption = None,
    temporal: TemporalOption = None,
    task_queue: TaskQueueOption = None,
    namespace: NamespaceOption = "default",
    detach: DetachOption = False,
    instructions: InstructionsOption = None,
) -> None:
    """Run an agent on TASK and show it working; with --store, checkpoint it.

    With --temporal HOST:PORT --task-queue Q the run goes to the workers of Q instead.
    """
    if temporal:
        run_remote(task, temporal, task_queue, namespace, as_json, detach)
        return
    loaded: list[AgentConfig] = []
    options = AgentOptions(model, config, workflow, instructions or "", tools=tools, rag=rag)
    with reported(loaded):
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        with json_stdout(as_json) as out:
            outcome = _run_async(lambda: _run_stored(agent, task, store, as_json, out))
    report_outcome(outcome, store_label(store) if store else None, options, as_json=as_json)


async def _run_stored(
    agent: Any, task: str, url: str | None, as_json: bool, out: IO[str]
) -> RunOutcome:
    store = open_cli_store(url) if url else None
    try:
        return await run_with_display(
            agent, task, _console(), as_json=as_json, out=out, store=store
        )
    finally:
        if store is not None:
            await store.close()


def _read_line(prompt: str, console: Console, interactive: bool) -> str | None:
    try:
        if interactive:
            return console.input(prompt)
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None
    except EOFError:
        return None


@app.command()
def chat(
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    as_json: JsonOption = False,
    instructions: InstructionsOption = None,
) -> None:
    """Talk to an agent; each turn remembers the conversation. Empty line or EOF ends it."""
    loaded: list[AgentConfig] = []
    console = _console()
    with reported(loaded):
        agent, agent_config = build_agent(AgentOptions(model, config, workflow, instructions or ""))
        loaded.append(agent_config)
        session = ChatSession(agent, console, as_json=as_json, out=sys.stdout)
        interactive = sys.stdin.isatty()
        # one event loop for the whole session: the model's HTTP client lives on it
        with asyncio.Runner() as runner:
            while (line := _read_line("[bold]you>[/] ", console, interactive)) is not None:
                if line.strip() in ("", "/exit", "/quit"):
                    break
                runner.run(session.send(line))


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


def _load_target(target: str) -> Any:
    from ponder.agent.run.workflows import WORKFLOWS

    if target in WORKFLOWS:
        return WORKFLOWS[target][0]
    if ":" not in target:
        names = ", ".join(WORKFLOWS)
        raise UserError(f"cannot disassemble {target!r}: give {names} or module:attribute")
    return import_attribute(target, "program")


def _program_of(value: Any, target: str) -> Any:
    from ponder.vm import Program, compile_program

    if isinstance(value, Program):
        return value
    try:
        return compile_program(value)
    except Exception as error:
        raise UserError(f"{target!r} is not a Program or a block ({error})") from None


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
    from ponder.agent.run.workflows import WORKFLOWS

    with reported([]):
        if list_only:
            for name, (program, what) in WORKFLOWS.items():
                typer.echo(f"{name:<11} {len(program.instructions):>3} instructions  {what}")
            return
        for target in targets or list(WORKFLOWS):
            program = _program_of(_load_target(target), target)
            typer.echo(f"== {target}")
            typer.echo(program.dis())


def _announcer(host: str, port: int, token: str | None) -> Callable[[], None]:
    """What ``ponder serve`` prints once it listens: where the API and the viewer are."""
    shown = f"[{host}]" if ":" in host else host

    def announce() -> None:
        base = f"http://{shown}:{port}"
        typer.echo(f"ponder serve: the API at {base}/v1, the viewer at {base}/")
        if token:
            typer.echo("clients send 'Authorization: Bearer <token>'; the viewer asks for it")
        typer.echo("Ctrl-C stops the server")

    return announce


def _is_loopback(host: str) -> bool:
    """A loopback address or ``localhost``; a name that merely starts with ``127.`` is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _allowed_hosts(host: str, extra: list[str] | None) -> list[str]:
    """The ``Host`` names to serve: the bound address (and localhost names) plus ``extra``."""
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    names = {host, f"[{host}]"} if ":" in host else {host}
    if _is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return sorted(names | set(extra or ()))


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(envvar="PONDER_SERVER_TOKEN", help="Bearer token clients must send."),
    ] = None,
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    store: StoreOption = None,
    tools: ToolsOption = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(help="Another Host name to serve (a proxy's); repeat it; '*': any."),
    ] = None,
    instructions: InstructionsOption = None,
) -> None:
    """Serve the HTTP API, the OpenAI-compatible endpoint and the viewer.

    With --store, runs are checkpointed and suspended runs can be approved over HTTP.
    Only the bound address's Host names are served, unless --allowed-host adds some.
    """
    if not _is_loopback(host) and not token:
        hint = "pass --token <secret> or set PONDER_SERVER_TOKEN"
        fail(f"error: binding to {host} needs a bearer token (hint: {hint})", EXIT_USAGE)
    if not 0 <= port <= 65535:
        fail(f"error: port {port} is out of range (hint: use 1-65535)", EXIT_USAGE)
    loaded: list[AgentConfig] = []
    with reported(loaded):
        from ponder.server.app import create_app, serve_app

        options = AgentOptions(model, config, workflow, instructions or "", tools=tools)
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        chosen = open_cli_store(store) if store else None
        hosts = _allowed_hosts(host, allowed_host)
        app = create_app(agent, token=token, store=chosen, allowed_hosts=hosts)
        serve_app(app, host=host, port=port, on_ready=_announcer(host, port, token))


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
        from ponder.retrieval import FolderIndex

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
)
def mcp_thinking(ctx: typer.Context) -> None:
    """The sequential_thinking MCP server over stdio (extra options are passed on)."""
    from ponder.mcp.thinking_server import main as thinking_main

    with reported([]):
        thinking_main(list(ctx.args))


def main() -> None:
    """Entry point of the ``ponder`` script."""
    try:
        app()
    except SystemExit as done:
        exit_after_temporal(done.code if isinstance(done.code, int) else 1)
        raise


if __name__ == "__main__":
    main()
