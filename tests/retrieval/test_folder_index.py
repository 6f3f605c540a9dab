"""The SQLite FTS5 folder index: chunking, bm25 ranking, refresh on change, bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ponder.exceptions import UserError
from ponder.retrieval import FolderIndex, Retriever, chunk_text, index_folder


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    write(folder, "tea.md", "# Tea\nGreen tea is steeped at 80 degrees for two minutes.")
    write(folder, "coffee.txt", "Espresso is brewed under pressure. Coffee beans are roasted.")
    write(folder, "notes/garden.md", "Tomatoes need sun. Water the garden in the morning.")
    write(folder, "image.png", "not a document")
    return folder


def test_chunks_overlap_and_cover_every_word() -> None:
    words = [f"w{i}" for i in range(25)]
    chunks = chunk_text(" ".join(words), chunk_words=10, overlap_words=3)
    assert chunks[0].split() == words[:10]
    assert chunks[1].split()[:3] == words[7:10]
    covered = {w for c in chunks for w in c.split()}
    assert covered == set(words)
    assert chunk_text("   ") == []


def test_bad_chunk_sizes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="overlap_words"):
        chunk_text("a b c", chunk_words=5, overlap_words=5)
    with pytest.raises(UserError, match="overlap_words"):
        FolderIndex(tmp_path, chunk_words=4, overlap_words=9)


def test_the_best_chunk_ranks_first(docs: Path) -> None:
    index = index_folder(docs)
    assert isinstance(index, Retriever)
    assert index.count() == 3
    found = index.search("How hot should green tea be?", 3)
    assert found[0].source == "tea.md" and "80 degrees" in found[0].text
    assert found[0].score > 0
    assert [p.source for p in index.search("garden tomatoes", 1)] == ["notes/garden.md"]
    assert (docs / ".ponder-index.sqlite").exists()


def test_query_text_is_never_read_as_fts_syntax(docs: Path) -> None:
    index = index_folder(docs, db_path=docs.parent / "elsewhere.sqlite")
    for query in ['"unbalanced', "NEAR(tea", "tea AND OR NOT", "col:tea*", ")(", "???", ""]:
        index.search(query, 2)  # no sqlite3.OperationalError
    assert index.search("???", 2) == [] and index.search("", 2) == []
    assert index.search('"green" tea*', 1)[0].source == "tea.md"


def test_changed_added_and_removed_files_are_reindexed(docs: Path) -> None:
    index = index_folder(docs)
    assert index.refresh() == 0
    tea = docs / "tea.md"
    tea.write_text("Oolong is steeped at 90 degrees.", encoding="utf-8")
    os.utime(tea, ns=(tea.stat().st_atime_ns, tea.stat().st_mtime_ns + 10**9))
    write(docs, "bread.md", "Sourdough needs a starter.")
    (docs / "coffee.txt").unlink()
    assert index.search("sourdough starter", 1)[0].source == "bread.md"
    assert index.search("espresso", 3) == []
    assert index.search("oolong", 1)[0].source == "tea.md"
    assert index.search("green", 3) == []


def test_binary_and_undecodable_files_do_not_break_indexing(docs: Path) -> None:
    (docs / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (docs / "latin.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    index = index_folder(docs)
    assert index.search("binary", 2) == []
    assert index.search("caf", 2)[0].source == "latin.txt"


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a folder"):
        index_folder(tmp_path / "nope")
    file = write(tmp_path, "a.md", "x")
    with pytest.raises(UserError, match="not a folder"):
        index_folder(file)


async def test_retrieve_runs_off_the_event_loop(docs: Path) -> None:
    index = index_folder(docs)
    found = await index.retrieve("espresso pressure", 2)
    assert found[0].source == "coffee.txt"
    assert found[0].render().startswith("[coffee.txt#0]\n")
