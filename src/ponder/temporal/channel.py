"""`ModelChannel`: a workflow's model requests — their conversations and streamed text."""

from __future__ import annotations

from typing import Any

from ponder.messages import messages_to_json
from ponder.models.base import ModelRequest, ReasoningDelta, StreamEvent, TextDelta

__all__ = ["ModelChannel"]


class ModelChannel:
    """The workflow's side of its model requests: their messages, and their streamed text.

    Text streams by Signal: the activity sends what the model wrote every fraction of a
    second (``model_deltas``), the workflow turns it into ``text_delta`` events, and every
    observer — the events Query, hence the CLI live view and ``ponder serve`` — sees the
    answer grow. Signals are history events, so a replay emits the same events at the
    same places; batching keeps them to a few per request. (Heartbeat details were the
    alternative: they stay out of the history, but the SDK throttles them to a fraction
    of the heartbeat timeout, only ``describe`` shows them, and the events Query could
    not.) A retried request streams again from its start; only the text that goes past
    what an earlier attempt showed is passed on, so an observer never sees text twice.
    """

    def __init__(self) -> None:
        self._count = 0
        self._messages: dict[int, list[dict[str, Any]]] = {}
        self._deltas: dict[int, list[StreamEvent]] = {}
        self._attempts: dict[int, tuple[int, dict[str, str], dict[str, str]]] = {}
        """Per request: the attempt streaming now, the text shown, that attempt's text."""

    def open(self, request: ModelRequest) -> int:
        """Hold ``request``'s conversation under a new request number."""
        self._count += 1
        self._messages[self._count] = messages_to_json(request.messages)
        self._deltas[self._count] = []
        return self._count

    def close(self, key: int) -> None:
        """Forget request ``key`` (it has its response)."""
        self._messages.pop(key, None)
        self._deltas.pop(key, None)
        self._attempts.pop(key, None)

    def messages(self, key: int) -> list[dict[str, Any]] | None:
        """Request ``key``'s conversation as JSON data; None once it is answered."""
        return self._messages.get(key)

    def push(self, key: int, deltas: Any, attempt: Any = 1) -> None:
        """Text attempt ``attempt`` of request ``key`` streamed: ``[["text"|"reasoning", str]]``."""
        pending = self._deltas.get(key)
        if pending is None or not isinstance(deltas, list):
            return  # late (the request is answered) or malformed: nothing to show
        number = attempt if isinstance(attempt, int) else 1
        current, shown, fresh = self._attempts.get(key, (number, {}, {}))
        if number < current:
            return  # a late piece of an attempt given up
        if number > current:
            fresh = {}
        self._attempts[key] = (number, shown, fresh)
        for item in deltas:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str):
                kind = "reasoning" if item[0] == "reasoning" else "text"
                text = fresh[kind] = fresh.get(kind, "") + item[1]
                before = shown.get(kind, "")
                if len(text) <= len(before):
                    continue  # an earlier attempt showed this much already
                shown[kind] = text
                new = text[len(before) :]
                pending.append(ReasoningDelta(new) if kind == "reasoning" else TextDelta(new))

    def take(self, key: int) -> list[StreamEvent]:
        """The deltas that arrived for request ``key`` since the last take."""
        found = self._deltas.get(key, [])
        taken = list(found)
        found.clear()
        return taken

    def has(self, key: int) -> bool:
        """True when request ``key`` has deltas to take."""
        return bool(self._deltas.get(key))
