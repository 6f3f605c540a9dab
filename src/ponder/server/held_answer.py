"""`HeldAnswer`: a run's answer text held back until the run accepts it.

A run may stream answer text and then withdraw it (``answer_withdrawn``: the model echoed
ponder's instructions, or the answer was cleaned or asked for again). Streams whose clients
cannot take shown text back (the OpenAI chunks, AG-UI) pass a run's events through a
`HeldAnswer`: ``text_delta`` events wait for ``run_finished``, whose ``output`` is the answer
the run accepted, and go out just before it, cut to that output (a stream's text is the
run's output); every other event passes at once. Text withdrawn, or still held when the
stream ends otherwise, never goes out.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HeldAnswer"]

Event = dict[str, Any]


class HeldAnswer:
    """A filter over one run's event dicts that holds its answer text until it is accepted."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: list[Event] = []

    def feed(self, event: Event) -> list[Event]:
        """The events to send now for ``event``: none for a text delta, held ones at the end."""
        kind = event.get("kind")
        if kind == "text_delta":
            self._held.append(event)
            return []
        if kind == "answer_withdrawn":
            self._held.clear()
        elif kind == "run_finished":
            accepted = accepted_deltas(self._held, str(event.get("output") or ""))
            self._held.clear()
            return [*accepted, event]
        return [event]


def accepted_deltas(held: list[Event], output: str) -> list[Event]:
    """The held text deltas cut to ``output``; one delta of ``output`` if they do not end in it.

    Text before the output (a retrieval round's reply) and whitespace around it (the run keeps
    its answer stripped) are not the answer. None held (a typed answer, a resumed run): none.
    """
    if not held or not output:
        return []
    text = "".join(str(e.get("text", "")) for e in held)
    start = text.rfind(output)
    end = start + len(output)
    if start < 0 or text[end:].strip():
        return [{**held[-1], "text": output}]
    cut: list[Event] = []
    offset = 0
    for event in held:
        piece = str(event.get("text", ""))
        lo, hi = max(start - offset, 0), min(end - offset, len(piece))
        if lo < hi:
            cut.append({**event, "text": piece[lo:hi]})
        offset += len(piece)
    return cut
