"""Retrieval for RAG mode: the `Retriever` protocol and a SQLite FTS5 index of a folder."""

from ponder.retrieval.base import Passage, Retriever
from ponder.retrieval.folder import FolderIndex, chunk_text, index_folder

__all__ = ["FolderIndex", "Passage", "Retriever", "chunk_text", "index_folder"]
