"""``ponder chat``: a REPL that keeps the conversation, optionally as a stored session."""

from __future__ import annotations

import asyncio
import shlex
import sys
import uuid
from typing import Annotated, Any

import typer
from rich.console import Console

from ponder.cli.options import (
    ApiKeyOption,
    BaseUrlOption,
    ConfigOption,
    InstructionsOption,
    JsonOption,
    ModelOption,
    StoreOption,
    ToolsOption,
    WorkflowOption,
)
from ponder.cli.reporting import reported
from ponder.cli.run_store import open_cli_store, store_label, with_store
from ponder.cli.session import AgentOptions, ChatSession, build_agent
from ponder.config import AgentConfig
from ponder.store import Store

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
    except EOFError:
        console.print()
        return None
    except KeyboardInterrupt:
        console.print()  # the shell's prompt starts on a line of its own
        raise


def chat(
    model: ModelOption = None,
    config: ConfigOption = None,
    workflow: WorkflowOption = None,
    as_json: JsonOption = False,
    instructions: InstructionsOption = None,
    tools: ToolsOption = None,
    store: StoreOption = None,
    session: SessionOption = None,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """Talk to an agent; each turn remembers the conversation.

    Ctrl-C stops the current answer and keeps the conversation; an empty line, /exit or
    Ctrl-D ends the chat. With --store the turns are checkpointed as a session, which
    --session NAME continues later.
    """
    loaded: list[AgentConfig] = []
    console = Console(highlight=False)
    with reported(loaded):
        options = AgentOptions(
            model,
            config,
            workflow,
            instructions or "",
            tools=tools,
            base_url=base_url,
            api_key=api_key,
        )
        if session is not None:
            # a stored session goes on with the agent its turns were made with
            name = session
            recipe = with_store(store, lambda chosen: _session_recipe(chosen, name))
            options = AgentOptions.from_recipe(recipe, options)
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


async def _session_recipe(store: Store, session: str) -> dict[str, Any]:
    """How the agent of the session's latest turn was built (``{}`` for a new session)."""
    run_id = await store.latest_in_session(session)
    return {} if run_id is None else dict((await store.load(run_id)).view.recipe)


def _banner(model: str, session: str | None, store: str | None) -> str:
    lines = [
        f"ponder chat with {model}. Ctrl-C stops an answer; an empty line, /exit or Ctrl-D leaves."
    ]
    if session is not None:
        command = ["ponder", "chat", "--session", session, *(["--store", store] if store else [])]
        lines.append(
            f"session {session} in {store_label(store)}: continue it later with "
            f"`{shlex.join(command)}`"
        )
    return "\n".join(lines)
