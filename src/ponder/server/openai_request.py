"""Reading an OpenAI chat request: its history, its client-side tools, and what it answers.

- The whole history reaches the agent: assistant ``tool_calls`` and ``tool`` results too.
- ``tools`` become external tools (``ponder.tools.external``); a call to one is sent back
  to the client with an id that names the run (`client_call_id`), so the request that
  carries its result resumes that run (`ToolResults`).
- Options the agent cannot honour (``n`` > 1, a forced ``tool_choice``, ``stop``, ``seed``,
  ``logprobs``, ...) are refused with a 400 naming them; ``temperature`` and ``max_tokens``,
  which many clients always send, are accepted and left to the agent's configuration (the
  response's ``X-Ponder-Ignored`` header names them); ``response_format`` is read by
  ``ponder.server.openai_format``; images (``image_url`` parts) by
  ``ponder.server.openai_media``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ponder.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
    parse_arguments,
)
from ponder.server.openai_media import RequestError, images_of
from ponder.server.schemas import ChatMessageIn, ChatRequest
from ponder.tools.definition import ToolDefinition

__all__ = [
    "IGNORED",
    "RequestError",
    "ToolResults",
    "check_options",
    "client_call_id",
    "client_tools",
    "ignored_header",
    "include_usage",
    "split_call_id",
    "to_history",
    "tool_results",
]

_CALL_ID = re.compile(r"^call_([0-9a-f]{32})_(.+)$", re.DOTALL)
IGNORED = ("temperature", "max_tokens", "max_completion_tokens")
"""Options accepted and left to the agent's configuration, named in ``X-Ponder-Ignored``."""
# options the agent cannot honour, with the values that ask for nothing (those are accepted)
_REFUSED: dict[str, tuple[Any, ...]] = {
    "stop": (None, [], ""),
    "seed": (None,),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "logit_bias": (None, {}),
    "top_p": (None, 1, 1.0),
    "frequency_penalty": (None, 0, 0.0),
    "presence_penalty": (None, 0, 0.0),
    "audio": (None,),
    "modalities": (None, ["text"]),
    "prediction": (None,),
    "web_search_options": (None,),
    "functions": (None,),
    "function_call": (None,),
}


def client_call_id(run_id: str, call_id: str) -> str:
    """The id a client sees for a call of run ``run_id``: it leads back to the run."""
    return f"call_{run_id}_{call_id}"


def split_call_id(text: str) -> tuple[str, str] | None:
    """``(run_id, call_id)`` of an id made by `client_call_id`, else None."""
    found = _CALL_ID.match(text)
    return None if found is None else (found.group(1), found.group(2))


def check_options(body: ChatRequest) -> None:
    """Refuse (`RequestError`) the options the agent cannot honour."""
    if body.n is not None and body.n != 1:
        raise RequestError(f"n={body.n} is not supported: an agent gives one answer", "n")
    given = body.model_extra or {}
    for name, accepted in _REFUSED.items():
        value = given.get(name)
        if not any(value == ok and type(value) is type(ok) for ok in accepted):
            raise RequestError(
                f"{name} is not supported: the agent cannot honour it (leave it out)", name
            )
    _check_tool_choice(body.tool_choice, body)


def ignored_header(body: ChatRequest) -> dict[str, str]:
    """``X-Ponder-Ignored`` naming the options given that the agent's configuration sets."""
    ignored = [name for name in IGNORED if getattr(body, name) is not None]
    return {"x-ponder-ignored": ", ".join(ignored)} if ignored else {}


def include_usage(body: ChatRequest) -> bool:
    """Whether a stream ends with a usage chunk (``stream_options.include_usage``)."""
    return body.stream_options is not None and bool(body.stream_options.include_usage)


def _check_tool_choice(choice: Any, body: ChatRequest) -> None:
    if choice is None or choice in ("auto", "none"):
        return
    if choice == "required" or isinstance(choice, dict):
        raise RequestError(
            "tool_choice can only be 'auto' or 'none': the agent decides which tools it calls "
            "(for a structured answer give response_format {'type': 'json_schema', ...})",
            "tool_choice",
        )
    raise RequestError(f"tool_choice {choice!r} is not 'auto', 'none' or 'required'", "tool_choice")


def client_tools(body: ChatRequest) -> list[ToolDefinition]:
    """The request's tools as external tool definitions (none with ``tool_choice: none``)."""
    if not body.tools or body.tool_choice == "none":
        return []
    names = [t.function.name for t in body.tools]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise RequestError(f"tools: the name {repeated[0]!r} is given twice", "tools")
    return [
        ToolDefinition(
            name=t.function.name,
            description=t.function.description,
            parameters=t.function.parameters,
            strict=bool(t.function.strict),
        )
        for t in body.tools
    ]


def to_history(body: ChatRequest, messages: list[ChatMessageIn]) -> list[Message]:
    """Ledger messages for ``messages``; a ``tool`` message must answer an earlier call."""
    history: list[Message] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        text = body.text_of(message)
        if message.role in ("system", "developer"):
            history.append(SystemMessage(content=text))
        elif message.role == "user":
            images = tuple(images_of(message, index))
            history.append(UserMessage(content=text, attachments=images))
        elif message.role == "assistant":
            parts = _assistant_parts(text, message, names)
            if parts:
                history.append(AssistantMessage(parts=parts))
        else:
            call_id = message.tool_call_id
            if not call_id or call_id not in names:
                raise RequestError(
                    f"messages[{index}]: a 'tool' message must answer a tool call of an "
                    "earlier assistant message (its tool_call_id)",
                    f"messages.{index}.tool_call_id",
                )
            history.append(ToolMessage(call_id=call_id, name=names.pop(call_id), content=text))
    return history


def _assistant_parts(
    text: str, message: ChatMessageIn, names: dict[str, str]
) -> tuple[AssistantPart, ...]:
    parts: list[AssistantPart] = [TextPart(text=text)] if text else []
    for call in message.tool_calls or ():
        args, error = parse_arguments(call.function.arguments)
        parts.append(
            ToolCallPart(
                id=call.id,
                name=call.function.name,
                arguments=call.function.arguments,
                args=args,
                args_error=error,
            )
        )
        names[call.id] = call.function.name
    return tuple(parts)


@dataclass(frozen=True)
class ToolResults:
    """A request that answers a suspended run's client-side calls."""

    run_id: str
    decision: dict[str, Any]
    """The resume decision: a ``result`` per call id."""


def tool_results(body: ChatRequest) -> ToolResults | None:
    """The results the request's trailing ``tool`` messages give one run; None if none do."""
    trailing: list[ChatMessageIn] = []
    for message in reversed(body.messages):
        if message.role != "tool":
            break
        trailing.insert(0, message)
    found = [(m, split_call_id(m.tool_call_id or "")) for m in trailing]
    ours = [(m, ids) for m, ids in found if ids is not None]
    if not ours:
        return None
    runs = {ids[0] for _, ids in ours}
    if len(runs) > 1 or len(ours) != len(found):
        raise RequestError(
            "the trailing tool messages answer calls of different runs; answer one "
            "response's tool_calls at a time",
            "messages",
        )
    decision = {ids[1]: {"action": "result", "output": body.text_of(m)} for m, ids in ours}
    return ToolResults(run_id=runs.pop(), decision=decision)
