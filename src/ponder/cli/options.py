"""Options several commands share, and parsing their values (imports, durations, decisions)."""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ponder.agent.output import OutputSpec
from ponder.exceptions import UserError
from ponder.tools.tool import Tool

__all__ = [
    "ApiKeyOption",
    "BaseUrlOption",
    "ConfigOption",
    "InstructionsOption",
    "JsonOption",
    "McpArgOption",
    "McpPromptOption",
    "McpResourceOption",
    "ModelOption",
    "OutputSchemaOption",
    "RagOption",
    "RecordOption",
    "StoreOption",
    "ToolsOption",
    "WorkflowOption",
    "import_attribute",
    "load_output_schema",
    "load_tools",
    "parse_answer",
    "parse_decision",
    "parse_duration",
]

ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", help="Model string, e.g. openai:gpt-4o-mini.")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", help="The model server's URL, e.g. http://127.0.0.1:11434/v1 (base_url)."
    ),
]
ApiKeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        help="The model provider's key (api_key); the provider's variable is safer on shared "
        "machines, since a command line is visible to other users.",
        show_default=False,
    ),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="A ponder.toml or config.toml file.")
]
WorkflowOption = Annotated[
    str | None, typer.Option("--workflow", "-w", help="Workflow: react or step-react.")
]
InstructionsOption = Annotated[
    str | None,
    typer.Option(
        "--instructions",
        "--system",
        help="The agent's instructions (its system prompt); overrides 'instructions' in TOML.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of the view.")]
ToolsOption = Annotated[
    str | None,
    typer.Option(
        "--tools", help="module:attribute naming a list of tools to offer (several: a,b)."
    ),
]
StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="PONDER_STORE",
        help="Checkpoint store: sqlite:///PATH, a file path, postgresql://..., memory://.",
    ),
]
OutputSchemaOption = Annotated[
    Path | None,
    typer.Option(
        "--output-schema", help="A JSON Schema file: the answer is validated JSON, printed alone."
    ),
]

RecordOption = Annotated[
    Path | None,
    typer.Option("--record", help="Write the run to this cassette (replay: `ponder replay`)."),
]
RagOption = Annotated[
    Path | None,
    typer.Option("--rag", help="Answer from this folder of documents (RAG mode, no tools)."),
]
McpPromptOption = Annotated[
    str | None,
    typer.Option("--mcp-prompt", help="Start from an MCP server's prompt: server/name or name."),
]
McpResourceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp-resource", metavar="SERVER=URI", help="Attach an MCP resource to the task."
    ),
]
McpArgOption = Annotated[
    list[str] | None,
    typer.Option("--mcp-arg", metavar="KEY=VALUE", help="An argument of the MCP prompt."),
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def import_attribute(target: str, what: str) -> Any:
    """The object named ``module:attr.path`` (the working directory is importable)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UserError(f"cannot load {what} {target!r}: give module:attribute")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise UserError(f"cannot load {target!r}: {error}") from None
    return value


def load_tools(targets: str) -> list[Any]:
    """The tools (or plain functions) named by ``targets``: ``module:attr`` items, ``,``-joined.

    Each names a tool or a list of tools.
    """
    found: list[Any] = []
    for target in (t.strip() for t in targets.split(",")):
        if target:
            found.extend(_load_tool_list(target))
    return found


def _load_tool_list(target: str) -> list[Any]:
    value = import_attribute(target, "tools")

    if isinstance(value, Tool) or callable(value):
        value = [value]
    if not isinstance(value, list | tuple) or not all(
        isinstance(t, Tool) or callable(t) for t in value
    ):
        raise UserError(f"--tools {target!r} must name a list of tools, got {type(value).__name__}")
    return list(value)


def parse_duration(text: str) -> float:
    """Seconds in ``text`` such as ``90s``, ``15m``, ``12h``, ``7d`` or ``2w``."""
    found = _DURATION.match(text)
    if found is None:
        raise UserError(f"cannot read the duration {text!r}: use a number and s, m, h, d or w")
    return float(found.group(1)) * _UNIT_SECONDS[found.group(2)]


def parse_answer(text: str) -> Any:
    """An answer to MCP questions given as JSON text (``--answer``)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"--answer is not valid JSON ({error.msg} at column {error.colno}): give "
            '{"action": "accept", "content": {...}}, "decline" or "cancel"'
        ) from None


def parse_decision(text: str) -> Any:
    """A resume decision given as JSON text (a string such as ``"approve"``, or a mapping)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"--decision is not valid JSON ({error.msg} at column {error.colno}): "
            'give "approve", "reject" or {"<call id>": "approve", ...}'
        ) from None


def load_output_schema(path: Path) -> Any:
    """The `OutputSpec` of a JSON Schema file; `UserError` naming the option otherwise."""
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--output-schema {path}: cannot read it: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"--output-schema {path}: not JSON: {exc}") from None
    return OutputSpec(json_schema=schema, argument=f"--output-schema {path}")
