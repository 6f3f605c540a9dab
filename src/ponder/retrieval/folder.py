"""A folder of text and Markdown documents indexed in SQLite FTS5, ranked by bm25.

``index_folder(path)`` builds or refreshes the index: documents are split into chunks of
about ``chunk_words`` words that overlap by ``overlap_words``; a file is re-indexed only
when its size or modification time changed, and removed files leave the index. Queries
are reduced to quoted terms joined by OR, so no user text is read as FTS5 syntax.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ponder.exceptions import UserError
from ponder.retrieval.base import Passage

__all__ = ["DEFAULT_DB_NAME", "SUFFIXES", "FolderIndex", "chunk_text", "index_folder"]

SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst"})
DEFAULT_DB_NAME = ".ponder-index.sqlite"
_TERM = re.compile(r"\w+", re.UNICODE)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5("
    "text, source UNINDEXED, ordinal UNINDEXED, tokenize='unicode61 remove_diacritics 2')",
)


def chunk_text(text: str, chunk_words: int = 160, overlap_words: int = 40) -> list[str]:
    """Split ``text`` into word windows of ``chunk_words`` overlapping by ``overlap_words``."""
    if chunk_words < 1 or not 0 <= overlap_words < chunk_words:
        raise UserError("chunking needs chunk_words >= 1 and 0 <= overlap_words < chunk_words")
    words = text.split()
    if not words:
        return []
    stride = chunk_words - overlap_words
    starts = range(0, max(1, len(words) - overlap_words), stride)
    return [" ".join(words[start : start + chunk_words]) for start in starts]


def _documents(root: Path, db_path: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in SUFFIXES and path.is_file() and path != db_path:
            yield path


def _read(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\x00" in data:
        return None  # binary content under a text suffix
    return data.decode("utf-8", errors="replace")


class FolderIndex:
    """The FTS5 index of one folder; a `Retriever`."""

    def __init__(
        self,
        root: str | Path,
        db_path: str | Path | None = None,
        *,
        chunk_words: int = 160,
        overlap_words: int = 40,
        auto_refresh: bool = True,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise UserError(f"cannot index {str(root)!r}: not a folder")
        self.db_path = Path(db_path) if db_path else self.root / DEFAULT_DB_NAME
        self.chunk_words, self.overlap_words = chunk_words, overlap_words
        self.auto_refresh = auto_refresh
        chunk_text("x", chunk_words, overlap_words)  # validate the sizes now
        with self._connect() as db:
            for statement in _SCHEMA:
                db.execute(statement)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.db_path)
        try:
            with db:  # one transaction: committed, or rolled back on error
                yield db
        finally:
            db.close()

    def refresh(self) -> int:
        """Re-index files that changed and drop removed ones; return how many changed."""
        changed = 0
        with self._connect() as db:
            known = {row[0]: (row[1], row[2]) for row in db.execute("SELECT * FROM files")}
            present = set()
            for path in _documents(self.root, self.db_path.resolve()):
                name = path.relative_to(self.root).as_posix()
                present.add(name)
                stat = path.stat()
                if known.get(name) != (stat.st_size, stat.st_mtime_ns):
                    self._index_file(db, path, name, (stat.st_size, stat.st_mtime_ns))
                    changed += 1
            for name in known.keys() - present:
                db.execute("DELETE FROM chunks WHERE source = ?", (name,))
                db.execute("DELETE FROM files WHERE path = ?", (name,))
                changed += 1
        return changed

    def _index_file(
        self, db: sqlite3.Connection, path: Path, name: str, stamp: tuple[int, int]
    ) -> None:
        db.execute("DELETE FROM chunks WHERE source = ?", (name,))
        text = _read(path) or ""
        rows = [
            (chunk, name, ordinal)
            for ordinal, chunk in enumerate(chunk_text(text, self.chunk_words, self.overlap_words))
        ]
        db.executemany("INSERT INTO chunks (text, source, ordinal) VALUES (?, ?, ?)", rows)
        db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (name, *stamp))

    def count(self) -> int:
        """How many chunks the index holds."""
        with self._connect() as db:
            return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def search(self, query: str, limit: int = 4) -> list[Passage]:
        """The best ``limit`` chunks for ``query`` by bm25 (empty for a query without terms)."""
        terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(query)))
        if not terms or limit < 1:
            return []
        if self.auto_refresh:
            self.refresh()
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:64])
        sql = (
            "SELECT source, ordinal, text, bm25(chunks) AS rank FROM chunks "
            "WHERE chunks MATCH ? ORDER BY rank LIMIT ?"
        )
        with self._connect() as db:
            rows = db.execute(sql, (match, limit)).fetchall()
        return [Passage(source=s, chunk=int(o), text=t, score=-float(r)) for s, o, t, r in rows]

    async def retrieve(self, query: str, limit: int) -> list[Passage]:
        """`search` off the event loop."""
        return await asyncio.to_thread(self.search, query, limit)


def index_folder(path: str | Path, db_path: str | Path | None = None) -> FolderIndex:
    """Index (or refresh the index of) the documents under ``path``; return the index.

    The database defaults to ``<path>/.ponder-index.sqlite``.
    """
    index = FolderIndex(path, db_path)
    index.refresh()
    return index
