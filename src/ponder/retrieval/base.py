"""`Retriever`: what RAG mode needs from a document store — passages for a query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Passage", "Retriever"]


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved chunk: where it comes from, its text, and its relevance (higher wins)."""

    source: str
    text: str
    score: float
    chunk: int = 0

    def render(self) -> str:
        """The passage as shown to the model, headed by its source."""
        return f"[{self.source}#{self.chunk}]\n{self.text}"


@runtime_checkable
class Retriever(Protocol):
    """Anything that finds passages relevant to a query."""

    async def retrieve(self, query: str, limit: int) -> list[Passage]:
        """At most ``limit`` passages for ``query``, best first."""
        ...
