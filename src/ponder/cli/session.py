"""What the commands share: building an agent from options, and running it with a display."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, assert_never

from rich.console import Console

from ponder.agent import Agent, RunResult, RunStream
from ponder.cli.interrupts import RunInterrupter, sigint_handled
from ponder.cli.options import load_tools
from ponder.cli.render import LiveDisplay
from ponder.config import AgentConfig, load_config
from ponder.events import (
    AnswerWithdrawn,
    CheckpointWritten,
    Compaction,
    Event,
    LimitReached,
    LoopDetected,
    McpEvent,
    MiddleMessage,
    ModelDegraded,
    ModelFallback,
    ModelUnanswered,
    OutputPartial,
    OutputRejected,
    PlanReplanned,
    PlanUpdated,
    Reasoning,
    ReasoningDelta,
    Reflection,
    ReportRaised,
    Retrieval,
    RoundStarted,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    StallDetected,
    StepFinished,
    StepStarted,
    StructuredReasoning,
    SubAgentEvent,
    TextDelta,
    Thinking,
    Todo,
    ToolCallFailed,
    ToolCallFinished,
    ToolCallStarted,
    ToolPrediction,
    Usage,
    event_to_dict,
)
from ponder.exceptions import UserError
from ponder.messages import Message
from ponder.models.providers import PROVIDERS
from ponder.store.base import Store

__all__ = [
    "AgentOptions",
    "ChatSession",
    "RunOutcome",
    "build_agent",
    "json_stdout",
    "model_base_url",
    "run_with_display",
    "write_json_event",
]


class AgentOptions:
    """The options every agent-running command takes."""

    def __init__(
        self,
        model: str | None,
        config: Path | None,
        workflow: str | None,
        instructions: str = "",
        *,
        tools: str | None = None,
        rag: Path | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.config_path = config
        self.workflow = workflow
        self.instructions = instructions
        self.tools = tools
        self.rag = rag

    def load(self) -> AgentConfig:
        """The configuration: file, then ``PONDER_*`` variables, then these options."""
        overrides: dict[str, Any] = {}
        if self.model:
            overrides["model"] = self.model
        if self.workflow:
            overrides["agent_workflow"] = self.workflow
        if self.base_url:
            overrides["base_url"] = self.base_url
        if self.api_key:
            overrides["api_key"] = self.api_key
        if self.instructions:
            overrides["instructions"] = self.instructions
        if self.rag is not None:
            if not self.rag.is_dir():
                raise UserError(f"--rag {str(self.rag)!r} is not a folder of documents")
            overrides["tool_calling_mode"] = "rag"
            overrides["rag_index_path"] = str(self.rag.resolve())
            if not self.workflow:  # --rag over a config's step-react; both flags are refused
                overrides["agent_workflow"] = "react"
        return load_config(self.config_path, **overrides)

    def recipe(self) -> dict[str, Any]:
        """What a stored run records of these options, to rebuild the agent when resumed."""
        return {
            "config": str(self.config_path.resolve()) if self.config_path else None,
            "tools": [self.tools] if self.tools else [],
            "instructions": self.instructions,
            "rag": str(self.rag.resolve()) if self.rag else None,
            **({"base_url": self.base_url} if self.base_url else {}),
        }

    @classmethod
    def from_recipe(cls, recipe: dict[str, Any], given: AgentOptions) -> AgentOptions:
        """The options a stored run was made with; each option ``given`` wins."""

        def text(key: str) -> str | None:
            value = recipe.get(key)
            return value if isinstance(value, str) and value else None

        config, rag = text("config"), text("rag")
        tools = recipe.get("tools")
        return cls(
            given.model or text("model"),
            given.config_path or (Path(config) if config else None),
            given.workflow or text("workflow"),
            given.instructions or text("instructions") or "",
            tools=given.tools or (",".join(tools) if isinstance(tools, list) and tools else None),
            rag=given.rag or (Path(rag) if rag else None),
            base_url=given.base_url or text("base_url"),
            api_key=given.api_key,
        )

    def as_arguments(self) -> list[str]:
        """These options as command-line arguments, to rebuild the same agent elsewhere."""
        pairs = [
            ("--model", self.model),
            ("--config", str(self.config_path) if self.config_path else None),
            ("--workflow", self.workflow),
            ("--instructions", self.instructions or None),
            ("--tools", self.tools),
            ("--rag", str(self.rag) if self.rag else None),
        ]
        return [item for flag, value in pairs if value for item in (flag, value)]


def build_agent(options: AgentOptions) -> tuple[Agent, AgentConfig]:
    """An agent for ``options`` with its model resolved now, so a missing key fails early."""
    config = options.load()
    tools = load_tools(options.tools) if options.tools else []
    agent = Agent(config=config, tools=tools, instructions=options.instructions)
    _ = agent.model
    agent.recipe.update(options.recipe())
    return agent, config


def model_base_url(config: AgentConfig | None) -> str | None:
    """Where the configured model lives, for error messages."""
    if config is None or not config.model:
        return None
    provider = config.model.partition(":")[0]
    profile = PROVIDERS.get(provider)
    if profile is None:
        return config.base_url
    return profile.base_url(config.base_url) or "https://api.openai.com/v1"


@contextmanager
def json_stdout(as_json: bool) -> Iterator[IO[str]]:
    """The stream for JSON lines; with ``as_json``, anything else printed goes to stderr.

    A tool's ``print()`` would otherwise land between the JSON lines and break them.
    """
    out = sys.stdout
    if not as_json:
        yield out
        return
    with redirect_stdout(sys.stderr):
        yield out


def write_json_event(event: Event, out: IO[str]) -> None:
    """One event as one JSON line."""
    out.write(json.dumps(event_to_dict(event), ensure_ascii=False, default=str) + "\n")
    out.flush()


@dataclass
class RunOutcome:
    """How a run ended, as its events told: its id, status, answer and any suspension."""

    run_id: str = ""
    status: str = "running"
    output: str = ""
    stop_reason: str = ""
    suspension: dict[str, Any] | None = None

    def observe(self, event: Event) -> None:
        """Fold in one event."""
        self.run_id = event.run_id or self.run_id
        match event:
            case RunStarted() | RunResumed():
                self.status, self.suspension = "running", None
            case RunFinished():
                self.status, self.output = "completed", event.output
                self.stop_reason = event.stop_reason
            case RunSuspended():
                self.status = "suspended"
                self.suspension = {"reason": event.reason, "payload": event.payload}
            case RunCancelled():
                self.status = "interrupted" if event.resumable else "cancelled"
            case (
                RunFailed()
                | RoundStarted()
                | Usage()
                | Reasoning()
                | StructuredReasoning()
                | ToolPrediction()
                | ToolCallStarted()
                | ToolCallFinished()
                | ToolCallFailed()
                | MiddleMessage()
                | Reflection()
                | LimitReached()
                | LoopDetected()
                | StallDetected()
                | TextDelta()
                | ReasoningDelta()
                | Thinking()
                | Todo()
                | PlanUpdated()
                | StepStarted()
                | StepFinished()
                | Compaction()
                | Retrieval()
                | ReportRaised()
                | CheckpointWritten()
                | ModelDegraded()
                | ModelUnanswered()
                | PlanReplanned()
                | McpEvent()
                | OutputPartial()
                | OutputRejected()
                | ModelFallback()
                | SubAgentEvent()
                | AnswerWithdrawn()
            ):
                pass
            case _:
                assert_never(event)


async def run_with_display(
    agent: Agent,
    prompt: str,
    console: Console,
    *,
    as_json: bool,
    out: IO[str],
    store: Store | None = None,
    history: Sequence[Message] = (),
    output: Any = None,
) -> RunOutcome:
    """Stream a run (checkpointed to ``store`` if given): JSON lines, or the live view.

    ``output`` types the answer (an ``OutputSpec``, from ``--output-schema``). With a
    store, Ctrl-C interrupts the run resumably (a second one cancels it; see
    `ponder.cli.interrupts`) and the outcome says so.
    """
    outcome = RunOutcome()
    stream = agent.stream(prompt, store=store, message_history=history, output_type=output)
    if store is None:
        await _show(stream, console, as_json, out, outcome.observe)
        return outcome
    notes = Console(stderr=True, highlight=False, soft_wrap=True) if as_json else console
    interrupter = RunInterrupter(stream, lambda line: notes.print(line, markup=False))

    def observe(event: Event) -> None:
        outcome.observe(event)
        interrupter.observe(event)

    with sigint_handled(interrupter.press):
        try:
            await _show(stream, console, as_json, out, observe)
        except asyncio.CancelledError:
            if not interrupter.presses:
                raise
    return outcome


async def _show(
    stream: RunStream,
    console: Console,
    as_json: bool,
    out: IO[str],
    observe: Callable[[Event], None],
) -> None:
    if as_json:
        async for event in stream:
            observe(event)
            write_json_event(event, out)
        return
    with LiveDisplay(console) as display:
        async for event in stream:
            observe(event)
            display.update(event)


class ChatSession:
    """A conversation: each turn runs with the previous turns' messages as history.

    Turns are streamed, so the answer appears as the model writes it. With a store and a
    session id, every turn is checkpointed and the conversation is the session's (so it
    goes on in a later ``ponder chat --session``). Ctrl-C during a turn cancels that turn
    only: the conversation stays as it was before it.
    """

    def __init__(
        self,
        agent: Agent,
        console: Console,
        *,
        as_json: bool,
        out: IO[str],
        store: Store | None = None,
        session_id: str | None = None,
    ) -> None:
        self.agent = agent
        self.console = console
        self.as_json = as_json
        self.out = out
        self.store = store
        self.session_id = session_id
        self.history: list[Message] = []
        self._stopped = False

    def say(self, line: str) -> None:
        """A note for the user (on stderr with --json)."""
        if self.as_json:
            Console(stderr=True, highlight=False, soft_wrap=True).print(line, markup=False)
        else:
            self.console.print(line, markup=False, style="dim", soft_wrap=True)

    async def send(self, prompt: str) -> RunResult | None:
        """Run one turn and keep its messages for the next; None if Ctrl-C stopped it."""
        if self.store is not None and self.session_id is not None:
            stream = self.agent.stream(prompt, store=self.store, session_id=self.session_id)
        else:
            stream = self.agent.stream(prompt, message_history=self.history, store=self.store)
        self._stopped = False

        def stop() -> None:
            self._stopped = True
            stream.cancel()

        with sigint_handled(stop):
            try:
                await _show(stream, self.console, self.as_json, self.out, lambda _: None)
            except asyncio.CancelledError:
                if not self._stopped:
                    raise
                self.say("stopped: that turn is cancelled; the conversation goes on without it")
                return None
        result = stream.result
        self.history = list(result.messages)
        return result
