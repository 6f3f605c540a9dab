"""``ponder chat``: a REPL that keeps the conversation, optionally as a stored session."""

from __future__ import annotations

import asyncio
import sys
import uuid
from typing import Annotated

import typer
from rich.console import Console

from ponder.cli.options import (
    ConfigOption,
    InstructionsOption,
    JsonOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
)
from ponder.cli.reporting import reported
from ponder.cli.run_store import open_cli_store, store_label
from ponder.cli.session import AgentOptions, ChatSession, build_agent
from ponder.config import AgentConfig

__all__ = ["chat"]

SessionOption = Annotated[
    str | None,
    typer.Option(
        "--session",
        help="Continue (or start) this stored conversation; uses --store, else the default file.",
    ),
]


def _read_line(prompt: str, console: Console, interactive: bool) -> str | None:
    try:
        if interactive:
            return console.input(prompt)
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None
    except (EOFError, KeyboardInterrupt):
        return None


def chat(
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    as_json: JsonOption = False,
    instructions: InstructionsOption = None,
    tools: ToolsOption = None,
    store: StoreOption = None,
    session: SessionOption = None,
) -> None:
    """Talk to an agent; each turn remembers the conversation.

    Ctrl-C stops the current answer and keeps the conversation; an empty line, /exit or
    Ctrl-D ends the chat. With --store the turns are checkpointed as a session, which
    --session NAME continues later.
    """
    loaded: list[AgentConfig] = []
    console = Console(highlight=False)
    with reported(loaded):
        options = AgentOptions(model, config, workflow, instructions or "", tools=tools)
        agent, agent_config = build_agent(options)
        loaded.append(agent_config)
        chosen = open_cli_store(store) if store or session else None
        if chosen is not None and session is None:
            session = f"chat-{uuid.uuid4().hex[:8]}"
        talk = ChatSession(
            agent, console, as_json=as_json, out=sys.stdout, store=chosen, session_id=session
        )
        talk.say(_banner(agent.model.name, session, store))
        interactive = sys.stdin.isatty()
        # one event loop for the whole session: the model's HTTP client lives on it
        with asyncio.Runner() as runner:
            try:
                while (line := _read_line("[bold]you>[/] ", console, interactive)) is not None:
                    if line.strip() in ("", "/exit", "/quit"):
                        break
                    runner.run(talk.send(line))
            finally:
                if chosen is not None:
                    runner.run(chosen.close())


def _banner(model: str, session: str | None, store: str | None) -> str:
    lines = [
        f"ponder chat with {model}. Ctrl-C stops an answer; an empty line, /exit or Ctrl-D leaves."
    ]
    if session is not None:
        lines.append(
            f"session {session} in {store_label(store)}: "
            f"continue it later with `ponder chat --session {session}`"
            + (f" --store {store}" if store else "")
        )
    return "\n".join(lines)
