"""A fast token estimator for budgeting before a request; nothing downloads tokenizer files.

Latin-script text averages about four characters per token; CJK ideographs, kana and
hangul are about one token each. Provider-reported usage always wins over this estimate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ponder.messages import AssistantMessage, Message, ReasoningPart, TextPart, ToolCallPart

__all__ = ["estimate_messages_tokens", "estimate_tokens"]

_WIDE = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]"
)
_MESSAGE_OVERHEAD = 4
_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimate the token count of ``text`` (CJK-aware, about ±20% on typical prose)."""
    if not text:
        return 0
    if text.isascii():
        return -(-len(text) // _CHARS_PER_TOKEN)
    wide = len(_WIDE.findall(text))
    narrow = len(text) - wide
    return wide + -(-narrow // _CHARS_PER_TOKEN)


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    """Estimate the prompt tokens of a conversation, with a small per-message overhead."""
    total = 0
    for message in messages:
        total += _MESSAGE_OVERHEAD
        if isinstance(message, AssistantMessage):
            total += _assistant_tokens(message)
        else:
            total += estimate_tokens(message.content)
    return total


def _assistant_tokens(message: AssistantMessage) -> int:
    total = 0
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart):
            total += estimate_tokens(part.text)
        elif isinstance(part, ToolCallPart):
            total += estimate_tokens(part.name) + estimate_tokens(part.arguments) + 3
    return total
