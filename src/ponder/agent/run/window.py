"""What a model request sends of the ledger.

All of it, or (``use_minimal_context``) the current turn only; the run's requests and the
strategies both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ponder.agent.run.state import RunState
from ponder.messages import Message, SystemMessage, UserMessage

__all__ = ["context_messages", "minimal_messages", "prompt_index"]


def minimal_messages(state: RunState) -> list[Message]:
    """The system prompt (if any) and the turn's user message: ``use_minimal_context``."""
    messages = state.ledger.messages
    system = [m for m in messages[:1] if isinstance(m, SystemMessage)]
    return [*system, state.prompt_message()]


def context_messages(state: RunState, minimal: bool) -> Sequence[Message]:
    """What a request sends: the whole ledger, or (``minimal``) the current turn only.

    The current turn is the system prompt, then everything from the turn's user message
    on (the turn's calls, results and injected instructions); earlier turns stay in the
    ledger, and in the store, but are not sent. The whole ledger is its own immutable
    tuple, sent as it is.
    """
    messages = state.ledger.messages
    if not minimal:
        return messages
    start = prompt_index(messages, state.prompt)
    if start < 0:
        return messages
    # the leading system prompt only: later system messages (reasoning) belong to their turn
    head = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), start)
    return [*messages[: min(head, start)], *messages[start:]]


def prompt_index(messages: Sequence[Message], prompt: str) -> int:
    """The index of the last user message that is ``prompt`` (-1: none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and message.content == prompt:
            return index
    return -1
