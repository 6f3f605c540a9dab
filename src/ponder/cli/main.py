"""The ``ponder`` command: run, chat, demo, dis, serve and the MCP thinking server.

Every command prints failures as one line with a hint on stderr and exits non-zero
(2 for misuse, 1 for a failed run, 130 for Ctrl-C).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from ponder.cli.errors import EXIT_USAGE, describe_failure
from ponder.cli.session import (
    AgentOptions,
    ChatSession,
    build_agent,
    model_base_url,
    run_with_display,
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

ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", help="Model string, e.g. openai:gpt-4o-mini.")
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="A ponder.toml or config.toml file.")
]
WorkflowOption = Annotated[
    str | None, typer.Option("--workflow", "-w", help="Workflow: react or step-react.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")]


def _fail(line: str, code: int) -> NoReturn:
    Console(stderr=True, highlight=False, soft_wrap=True).print(line, markup=False)
    raise typer.Exit(code)


@contextmanager
def _reported(config: list[AgentConfig]) -> Iterator[None]:
    """Turn any failure inside into one line and an exit code."""
    try:
        yield
    except typer.Exit:
        raise
    except (Exception, KeyboardInterrupt) as error:
        failure = describe_failure(error, base_url=model_base_url(config[0] if config else None))
        _fail(failure.line, failure.exit_code)


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
) -> None:
    """Run an agent on TASK and show it working."""
    loaded: list[AgentConfig] = []
    with _reported(loaded):
        agent, agent_config = build_agent(AgentOptions(model, config, workflow))
        loaded.append(agent_config)
        _run_async(
            lambda: run_with_display(agent, task, _console(), as_json=as_json, out=sys.stdout)
        )


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
) -> None:
    """Talk to an agent; each turn remembers the conversation. Empty line or EOF ends it."""
    loaded: list[AgentConfig] = []
    console = _console()
    with _reported(loaded):
        agent, agent_config = build_agent(AgentOptions(model, config, workflow))
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
        _fail("error: --delay must be 0 or more (hint: try --delay 0.2)", EXIT_USAGE)
    with _reported([]):
        agent = demo_agent(delay)
        _run_async(
            lambda: run_with_display(agent, DEMO_TASK, _console(), as_json=as_json, out=sys.stdout)
        )


def _load_target(target: str) -> Any:
    from ponder.agent import workflows

    builtin = {"react": workflows.REACT_BLOCK, "run": workflows.RUN_BLOCK}
    if target in builtin:
        return builtin[target]
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UserError(f"cannot disassemble {target!r}: give react, run or module:attribute")
    sys.path.insert(0, os.getcwd())
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise UserError(f"cannot load {target!r}: {error}") from None
    return value


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
        typer.Argument(help="react, run, or module:attribute (a Program or a block)."),
    ] = None,
) -> None:
    """Disassemble workflow programs (default: the built-in ones)."""
    with _reported([]):
        for target in targets or ["react", "run"]:
            program = _program_of(_load_target(target), target)
            typer.echo(f"== {target}")
            typer.echo(program.dis())


def _is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "::1", "localhost") or host.startswith("127.")


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
) -> None:
    """Serve the HTTP API, the OpenAI-compatible endpoint and the viewer."""
    if not _is_loopback(host) and not token:
        hint = "pass --token <secret> or set PONDER_SERVER_TOKEN"
        _fail(f"error: binding to {host} needs a bearer token (hint: {hint})", EXIT_USAGE)
    if not 0 <= port <= 65535:
        _fail(f"error: port {port} is out of range (hint: use 1-65535)", EXIT_USAGE)
    loaded: list[AgentConfig] = []
    with _reported(loaded):
        from ponder.server.app import create_app, serve_app

        agent, agent_config = build_agent(AgentOptions(model, config, workflow))
        loaded.append(agent_config)
        serve_app(create_app(agent, token=token), host=host, port=port)


@mcp_app.command(
    "thinking",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def mcp_thinking(ctx: typer.Context) -> None:
    """The sequential_thinking MCP server over stdio (extra options are passed on)."""
    from ponder.mcp.thinking_server import main as thinking_main

    with _reported([]):
        thinking_main(list(ctx.args))


def main() -> None:
    """Entry point of the ``ponder`` script."""
    app()


if __name__ == "__main__":
    main()
