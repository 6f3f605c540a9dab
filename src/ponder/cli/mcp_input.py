"""What ``ponder run`` takes from MCP servers: a prompt to start from, and the user's answers.

``--mcp-prompt server/name`` (or just ``name`` when one server has it) with
``--mcp-arg key=value`` fetches a server's prompt; its last user message is the task and
the messages before it are the history. `TerminalElicitation` answers a server's
elicitation on the terminal: the message, then one line per field (``!decline`` or
``!cancel`` on any line, or end of input, gives that answer instead).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import IO, Any

from ponder.exceptions import ToolError, UserError
from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ponder.messages import Message, UserMessage

__all__ = ["TerminalElicitation", "attach_resources", "fetch_prompt", "parse_prompt_args"]

_TRUE = {"y", "yes", "true", "1", "on"}
_FALSE = {"n", "no", "false", "0", "off"}


def parse_prompt_args(pairs: Sequence[str]) -> dict[str, str]:
    """``key=value`` strings as a dict; raises `UserError` for one without ``=``."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--mcp-arg expects key=value, got {pair!r}")
        found[key.strip()] = value
    return found


async def fetch_prompt(
    agent: Any, spec: str, arguments: dict[str, str], task: str
) -> tuple[str, list[Message]]:
    """The (task, history) a run starts from for the MCP prompt ``spec``."""
    from ponder.mcp.resources import get_prompt, list_prompts

    connections = _connections(agent, "--mcp-prompt")
    server, _, name = spec.rpartition("/")
    try:
        if not server:
            server = await _server_with(connections, name, list_prompts)
        if server not in connections:
            raise UserError(
                f"--mcp-prompt: no MCP server {server!r} (servers: {list(connections)})"
            )
        messages = await get_prompt(connections[server], name, arguments)
    except ToolError as exc:
        raise UserError(f"--mcp-prompt {spec!r}: {exc}") from exc
    return _split(messages, task)


async def attach_resources(agent: Any, specs: Sequence[str], task: str) -> str:
    """``task`` after the text of each ``server=uri`` resource (``--mcp-resource``)."""
    from ponder.mcp.resources import read_resource_text

    connections = _connections(agent, "--mcp-resource")
    parts: list[str] = []
    for spec in specs:
        server, sep, uri = spec.partition("=")
        if not sep or not uri or server not in connections:
            raise UserError(
                f"--mcp-resource expects SERVER=URI with a server of {list(connections)}, "
                f"got {spec!r}"
            )
        try:
            text = await read_resource_text(connections[server], uri)
        except ToolError as exc:
            raise UserError(f"--mcp-resource {spec!r}: {exc}") from exc
        parts.append(f"<resource server={server!r} uri={uri!r}>\n{text}\n</resource>")
    return "\n\n".join([*parts, task]) if parts else task


def _connections(agent: Any, option: str) -> dict[str, Any]:
    toolset = agent.toolbox.mcp
    if toolset is None:
        raise UserError(
            f"{option} needs MCP servers: set agent_mcp_client_enable = true and "
            "agent_mcp_server_scripts in the config"
        )
    found: dict[str, Any] = toolset.connections
    return found


async def _server_with(connections: dict[str, Any], name: str, list_prompts: Any) -> str:
    holders = [s for s, c in connections.items() if name in {p.name for p in await list_prompts(c)}]
    if len(holders) != 1:
        found = "no server offers it" if not holders else f"offered by {holders}"
        raise UserError(f"--mcp-prompt {name!r}: {found}; name it as server/{name}")
    return holders[0]


def _split(messages: list[Message], task: str) -> tuple[str, list[Message]]:
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)
    if last_user < 0:
        return task, messages
    text = messages[last_user].content  # type: ignore[union-attr]
    prompt = f"{text}\n\n{task}" if task else text
    return prompt, messages[:last_user] + messages[last_user + 1 :]


class TerminalElicitation:
    """Answers elicitation requests by asking on ``ask`` and reading lines from ``answers``."""

    def __init__(self, answers: IO[str] | None = None, ask: IO[str] | None = None) -> None:
        self._in = answers or sys.stdin
        self._out = ask or sys.stderr
        self._lock = asyncio.Lock()

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        """One answer at a time, even when several servers ask at once."""
        async with self._lock:
            self._say(f"\n[{request.server}] {request.message}")
            if request.mode == "url":
                self._say(f"  open: {request.url}")
                line = await self._line("  done? [y/N] ")
                if line is None:
                    return ElicitationAnswer("cancel")
                return ElicitationAnswer("accept" if line.lower() in _TRUE else "decline")
            return await self._form(request.schema)

    async def _form(self, schema: dict[str, Any]) -> ElicitationAnswer:
        content: dict[str, Any] = {}
        required = set(schema.get("required", []))
        for key, field in dict(schema.get("properties", {})).items():
            label = field.get("title") or key
            hint = field.get("description") or field.get("type", "")
            line = await self._line(
                f"  {label} ({hint}){'' if key in required else ' [optional]'}: "
            )
            if line is None or line in ("!cancel", "!decline"):
                return ElicitationAnswer("decline" if line == "!decline" else "cancel")
            if line or key in required:
                content[key] = _convert(line, field)
        return ElicitationAnswer("accept", content)

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    async def _line(self, question: str) -> str | None:
        self._out.write(question)
        self._out.flush()
        line = await asyncio.to_thread(self._in.readline)
        return line.strip() if line else None


def _convert(text: str, field: dict[str, Any]) -> Any:
    """``text`` as the field's JSON type when it reads as one (else as is, for the check)."""
    kind = field.get("type")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    if kind == "boolean" and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if kind == "array":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text
