"""RAG mode (``tool_calling_mode = "rag"``): one retrieval, then an answer without tools.

The model sees a minimal context — the system prompt with the retrieved passages, and the
user's current message — and no tools. The retriever comes from the strategy class
(``RagStrategy.using(retriever)``, passed as ``Agent(strategy=...)``) or, by default, from
the folder named by the ``rag_index_path`` config key, indexed with `index_folder`.
"""

from __future__ import annotations

from typing import ClassVar

from ponder.agent.strategies.base import AgentStrategy, StrategyCategory
from ponder.agent.strategies.prompts import rag_system_prompt
from ponder.events import Retrieval
from ponder.exceptions import UserError
from ponder.messages import Message, SystemMessage, UserMessage
from ponder.retrieval import Retriever, index_folder
from ponder.tools.tool import ToolResult

__all__ = ["RagStrategy"]


class RagStrategy(AgentStrategy):
    """Retrieve passages for the user's message once, then answer from them."""

    category: ClassVar[StrategyCategory] = "rag"
    retriever: ClassVar[Retriever | None] = None

    @classmethod
    def using(cls, retriever: Retriever) -> type[RagStrategy]:
        """A RAG strategy bound to ``retriever`` (give it to ``Agent(strategy=...)``)."""
        if not isinstance(retriever, Retriever):
            raise UserError("RagStrategy.using() needs an object with async retrieve(query, limit)")
        return type("BoundRagStrategy", (cls,), {"retriever": retriever})

    def _retriever(self) -> Retriever:
        if self.retriever is not None:
            return self.retriever
        path = self.config.rag_index_path
        if not path:
            raise UserError(
                "tool_calling_mode 'rag' needs a retriever: set 'rag_index_path' to a folder "
                "of documents, or pass strategy=RagStrategy.using(retriever)"
            )
        return index_folder(path)

    async def run(self) -> None:
        """Retrieve once, answer once, with no tools offered."""
        state, limit = self.state, self.config.rag_top_k
        passages = await self._retriever().retrieve(state.prompt, limit)
        await self.ctx.emit(
            Retrieval(
                query=state.prompt,
                sources=[f"{p.source}#{p.chunk}" for p in passages],
                scores=[p.score for p in passages],
            )
        )
        system = rag_system_prompt(self.ctx.instructions, [p.render() for p in passages])
        messages: list[Message] = [SystemMessage(content=system), UserMessage(content=state.prompt)]
        response = await self.ctx.request("rag", (), "none", messages=messages)
        state.ledger.append(response.to_message())
        for call in response.tool_calls:
            state.ledger.append(ToolResult.fail("no tools in RAG mode").to_message(call))
        self.finish(response.text, "answered")
