"""RAG mode (``tool_calling_mode = "rag"``): minimal context, one retrieval, then the answer.

With an index — a retriever from ``RagStrategy.using(retriever)`` (passed as
``Agent(strategy=...)``) or the folder named by ``rag_index_path``, indexed with
`index_folder` — the passages for the user's message go into the system prompt and the
model answers with no tools offered (the agent's own tools are not offered: `Agent` warns
about that when it is built).

With no index, the retrieval is one round with the agent's own tools (no ``agent_stop``,
no reasoning tool, no loop): the model may call any of them, concurrently, then answers
with tools off; a reply without calls is the answer. A usage limit already reached before
that round (one request allowed) skips it: the one request is the answer. With neither an
index nor tools, running is a `UserError`.

Either way the model sees the system prompt and the current turn only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ponder.agent.strategies.acting import act, answer_open_calls
from ponder.agent.strategies.base import AgentStrategy, StrategyCategory
from ponder.agent.strategies.builtins import Builtins
from ponder.agent.strategies.compaction import context_messages
from ponder.agent.strategies.prompts import rag_system_prompt
from ponder.events import LimitReached, Retrieval
from ponder.exceptions import UserError
from ponder.messages import AssistantMessage, Message, SystemMessage
from ponder.retrieval import Retriever, index_folder
from ponder.status import LIMIT_STOP_REASONS, LoopLimit, StopReason
from ponder.tools.tool import ToolResult

__all__ = ["RagStrategy"]


class RagStrategy(AgentStrategy):
    """Retrieve once for the user's message (an index, or the agent's tools), then answer."""

    category: ClassVar[StrategyCategory] = "rag"
    retriever: ClassVar[Retriever | None] = None

    @classmethod
    def using(cls, retriever: Retriever) -> type[RagStrategy]:
        """A RAG strategy bound to ``retriever`` (give it to ``Agent(strategy=...)``)."""
        if not isinstance(retriever, Retriever):
            raise UserError("RagStrategy.using() needs an object with async retrieve(query, limit)")
        return type("BoundRagStrategy", (cls,), {"retriever": retriever})

    @classmethod
    def has_index(cls, index_path: str | None) -> bool:
        """True when the retrieval comes from an index rather than the agent's tools."""
        return cls.retriever is not None or bool(index_path)

    def _retriever(self) -> Retriever:
        if self.retriever is not None:
            return self.retriever
        assert self.config.rag_index_path
        return index_folder(self.config.rag_index_path)

    async def run(self) -> None:
        """Retrieve once, then answer with tools off."""
        if self.has_index(self.config.rag_index_path):
            await self._answer_from_index()
        else:
            await self._answer_after_tools()

    async def _answer_from_index(self) -> None:
        state, limit = self.state, self.config.rag_top_k
        passages = await self._retriever().retrieve(state.prompt, limit)
        await self.ctx.bus.emit(
            Retrieval(
                query=state.prompt,
                sources=[f"{p.source}#{p.chunk}" for p in passages],
                scores=[p.score for p in passages],
            )
        )
        system = rag_system_prompt(self.ctx.instructions, [p.render() for p in passages])
        messages: list[Message] = [SystemMessage(content=system), state.prompt_message()]
        await self._answer(messages, "no tools in RAG mode")

    async def _answer_after_tools(self) -> None:
        tools = self.ctx.tools.definitions()
        if not tools:
            raise UserError(
                "tool_calling_mode 'rag' needs something to retrieve with: set 'rag_index_path' "
                "to a folder of documents, pass strategy=RagStrategy.using(retriever), or give "
                "the agent tools"
            )
        builtins = Builtins(self.ctx)
        builtins.definitions = {}  # the round offers the agent's own tools only (not shared)
        state = self.state
        if state.ledger.open_calls:  # resumed after an approval or a crash
            await answer_open_calls(self.ctx, builtins, 1)
        elif not self._retrieved():
            if await self.usage_limited():  # the one request left is kept for the answer
                return
            turn = context_messages(state, minimal=True)
            response = await self.ctx.caller.request("rag_retrieval", tools, "auto", messages=turn)
            calls = await act(self.ctx, response, builtins, 1)
            if not calls:
                self.finish(response.text, "answered")
                return
            state.rounds = 1
            names = sorted({c.name for c in calls})
            await self.ctx.bus.emit(Retrieval(query=state.prompt, sources=names, scores=[]))
        await self._answer(context_messages(state, minimal=True), "tools are off now")

    async def on_limited(self, limit: LoopLimit, value: int) -> None:
        """A limit reached before the retrieval round: answer from the message alone."""
        await self.ctx.bus.emit(LimitReached(limit=limit, value=value))
        turn = context_messages(self.state, minimal=True)
        await self._answer(turn, "tools are off now", LIMIT_STOP_REASONS[limit])

    def _retrieved(self) -> bool:
        turn = context_messages(self.state, minimal=True)
        return any(isinstance(m, AssistantMessage) and m.tool_calls for m in turn)

    async def _answer(
        self, messages: Sequence[Message], refusal: str, stop_reason: StopReason = "answered"
    ) -> None:
        output = self.ctx.answer_schema
        response = await self.ctx.caller.request(
            "rag", (), "none", output=output, messages=messages
        )
        self.state.ledger.append(response.to_message())
        for call in response.tool_calls:
            self.state.ledger.append(ToolResult.fail(refusal).to_message(call))
        self.finish_cleaned(response.text, stop_reason)
