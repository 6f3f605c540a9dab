"""The cassette: one recorded run as JSON — its model exchanges, tool calls and VM path.

A cassette holds what the run was given (prompt, history, instructions, config without
secrets, the tools it offered), every model request with its response in order, every
tool call that is not ponder's own with its result, the VM's instruction path (each
node it ran, by pc) and how the run ended. ``format``/``version`` name the layout; a
file that is not a valid cassette of this version is refused with a `UserError`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from ponder.exceptions import UserError
from ponder.messages import messages_to_json
from ponder.models.base import ModelRequest, ModelResponse
from ponder.tools.definition import ForceTool, ToolChoice, ToolDefinition
from ponder.tools.executor import ToolStatus
from ponder.tools.tool import ToolResult

__all__ = [
    "CASSETTE_FORMAT",
    "CASSETTE_VERSION",
    "Cassette",
    "Exchange",
    "NodeVisit",
    "RecordedError",
    "ToolRecord",
    "load_cassette",
    "request_to_json",
    "save_cassette",
]

CASSETTE_FORMAT = "ponder-cassette"
CASSETTE_VERSION = 1
SECRET_KEYS = frozenset({"api_key"})
"""Config keys never written to a cassette."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordedError(_Strict):
    """An exception a model request raised instead of answering."""

    type: str
    message: str


class Exchange(_Strict):
    """One model request and what came back: a response or an error.

    Requests mostly repeat the previous one and add a few messages, so each keeps only
    what is new: its first ``prefix`` messages are the previous request's first ``prefix``
    ones, and ``request["messages"]`` holds the rest (`Cassette.requests` gives them whole).
    """

    purpose: str = ""
    prefix: int = Field(default=0, ge=0)
    request: dict[str, Any]
    response: ModelResponse | None = None
    error: RecordedError | None = None


class ToolRecord(_Strict):
    """One tool call and its result, as the executor produced them."""

    call_id: str
    name: str
    arguments: Any = None
    result: ToolResult
    status: ToolStatus


class NodeVisit(_Strict):
    """One VM node the run ran: its offset and name."""

    pc: int = Field(ge=0)
    node: str | None = None


class Cassette(_Strict):
    """A recorded run (see the module's doc)."""

    format: Literal["ponder-cassette"] = "ponder-cassette"
    version: Literal[1] = 1
    run_id: str = ""
    prompt: str = ""
    model: str = ""
    workflow: str = ""
    instructions: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    tools_spec: str | None = None
    """The ``--tools module:attribute`` the CLI was given, to run the tools live again."""
    tools: list[ToolDefinition] = Field(default_factory=list)
    """The tools the run offered that are not ponder's own (their results are recorded)."""
    history: list[dict[str, Any]] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    tool_calls: list[ToolRecord] = Field(default_factory=list)
    trace: list[NodeVisit] = Field(default_factory=list)
    status: str = ""
    output: str = ""
    stop_reason: str = ""
    error: RecordedError | None = None
    _requests: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _whole_requests(self) -> Cassette:
        """Rebuild each request whole; a prefix longer than the previous request is refused."""
        self._rebuild()
        return self

    def _rebuild(self) -> None:
        previous: list[Any] = []
        whole: list[dict[str, Any]] = []
        for index, exchange in enumerate(self.exchanges):
            messages = exchange.request.get("messages", [])
            if exchange.prefix > len(previous) or not isinstance(messages, list):
                raise ValueError(
                    f"exchanges.{index}: prefix {exchange.prefix} is longer than the previous "
                    f"request ({len(previous)} messages), or its messages are not a list"
                )
            previous = previous[: exchange.prefix] + messages
            whole.append({**exchange.request, "messages": previous})
        self._requests = whole

    def requests(self) -> list[dict[str, Any]]:
        """Every recorded request whole, in order."""
        if len(self._requests) != len(self.exchanges):  # exchanges added since validation
            self._rebuild()
        return self._requests


def _tool_choice(choice: ToolChoice) -> Any:
    return {"tool": choice.name} if isinstance(choice, ForceTool) else choice


def request_to_json(request: ModelRequest, *, skip: int = 0) -> dict[str, Any]:
    """What a request asks, as JSON (its messages from ``skip`` on): what replays compare.

    Timeouts are left out: they change how long ponder waits, not what it asks.
    """
    settings = request.settings
    return {
        "messages": messages_to_json(list(request.messages)[skip:]),
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "tool_choice": _tool_choice(request.tool_choice),
        "output": None if request.output is None else request.output.model_dump(mode="json"),
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "extra_body": settings.extra_body,
    }


def _where(error: dict[str, Any]) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(top level)"


def load_cassette(path: str | os.PathLike[str]) -> Cassette:
    """Read and validate a cassette file; a `UserError` says what is wrong with it."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read the cassette {str(file)!r}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"the cassette {str(file)!r} is not JSON: {error.msg} at line {error.lineno}, "
            f"column {error.colno}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CASSETTE_FORMAT:
        raise UserError(
            f'{str(file)!r} is not a ponder cassette (no "format": "{CASSETTE_FORMAT}")'
        )
    if data.get("version") != CASSETTE_VERSION:
        raise UserError(
            f"the cassette {str(file)!r} has version {data.get('version')!r}; this ponder "
            f"reads version {CASSETTE_VERSION}"
        )
    try:
        return Cassette.model_validate(data)
    except ValidationError as error:
        problems = error.errors()
        first = "; ".join(f"{_where(dict(p))}: {p['msg']}" for p in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"the cassette {str(file)!r} is invalid: {first}{more}") from None


def save_cassette(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Write ``cassette`` to ``path`` (whole or not at all)."""
    file = Path(path)
    temporary = file.with_name(f".{file.name}.tmp")
    try:
        temporary.write_text(cassette.model_dump_json(indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, file)
    except OSError as error:
        raise UserError(f"cannot write the cassette {str(file)!r}: {error}") from None
