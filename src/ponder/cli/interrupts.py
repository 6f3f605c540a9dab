"""Ctrl-C in the commands that run agents: stop a run resumably, or cancel a chat turn.

In ``ponder run --store`` the first Ctrl-C lets the tool calls that are running finish
(their results are checkpointed) and then stops the run as ``interrupted``, which
``ponder runs resume`` continues; a second Ctrl-C cancels the run for good.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ponder.agent import RunStream
from ponder.events import Event, Thinking, Todo, ToolCallFailed, ToolCallFinished, ToolCallStarted

__all__ = ["RunInterrupter", "sigint_handled"]

_AFTER_A_CALL = (ToolCallFinished, ToolCallFailed, Thinking, Todo)


class RunInterrupter:
    """Turns Ctrl-C presses into `RunStream.interrupt` (first) and `RunStream.cancel`."""

    def __init__(self, stream: RunStream, say: Callable[[str], None]) -> None:
        self.stream = stream
        self.say = say
        self.presses = 0
        self._running: set[str] = set()

    def press(self) -> None:
        """One Ctrl-C."""
        self.presses += 1
        if self.presses > 1:
            self.say("cancelling the run (it cannot be resumed)")
            self.stream.cancel()
            return
        if not self._running:
            self.stream.interrupt()
            return
        count = len(self._running)
        self.say(
            f"interrupting: waiting for {count} running tool call(s) to finish, then the run "
            "stops and can be resumed; press Ctrl-C again to cancel it instead"
        )

    def observe(self, event: Event) -> None:
        """Follow the run's tool calls; interrupt once none is left running."""
        if isinstance(event, ToolCallStarted):
            self._running.add(event.call_id)
        elif isinstance(event, ToolCallFinished | ToolCallFailed):
            self._running.discard(event.call_id)
        if self.presses == 1 and not self._running and not isinstance(event, _AFTER_A_CALL):
            self.stream.interrupt()  # the finished calls' results are saved by now


@contextmanager
def sigint_handled(handler: Callable[[], None]) -> Iterator[None]:
    """Call ``handler`` on the running loop for each SIGINT inside the block."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, handler)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
