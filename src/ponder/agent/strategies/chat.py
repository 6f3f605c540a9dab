"""The plain-chat strategy (``no-action`` / ``tool_calling_mode = "none"``): no tools at all."""

from __future__ import annotations

from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.compaction import minimal_messages

__all__ = ["NoActionStrategy"]


class NoActionStrategy(AgentStrategy):
    """One model request with no tools offered; its text is the answer."""

    category = "chat"

    async def run(self) -> None:
        """Answer the user's message directly (from it alone with ``use_minimal_context``)."""
        minimal = minimal_messages(self.state) if self.config.use_minimal_context else None
        output = self.ctx.answer_schema
        response = await self.ctx.caller.request(
            "chat", (), "auto", output=output, messages=minimal
        )
        self.state.ledger.append(response.to_message())
        if minimal is None:
            await self.settle_answer(response.text, "answered")
        else:  # asking again would send the whole history
            self.finish_cleaned(response.text, "answered")
