"""Helpers of the composition tests: what a request sent, events by kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ponder.events import Event
from ponder.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage


def sent_text(messages: Sequence[Message]) -> str:
    """Every text a request's messages carry, one per line."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, (SystemMessage, UserMessage, ToolMessage)):
            lines.append(str(message.content))
        elif isinstance(message, AssistantMessage):
            lines.append(message.text)
    return "\n".join(lines)


def of_kind(events: Sequence[Event], kind: str) -> list[Any]:
    """The events of ``kind``, in order."""
    return [e for e in events if e.kind == kind]


def user_turns(messages: Sequence[Message]) -> list[str]:
    """The user messages' texts, in order."""
    return [str(m.content) for m in messages if isinstance(m, UserMessage)]
