"""The feature matrices in the docs (composition, and the same rows on Temporal) name only
tests that exist, and leave no cell blank."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ROOT / "docs" / "guides"
PAGES = [GUIDES / "composition.md", GUIDES / "temporal.md"]
CELL = re.compile(r"^(?:refused )?`(?P<file>[\w/]+\.py)::(?P<test>\w+)`$")


def cells(page: Path) -> list[tuple[str, str, str]]:
    """(row, column, cell) of every table on the page."""
    found: list[tuple[str, str, str]] = []
    header: list[str] = []
    for line in page.read_text().splitlines():
        if not line.startswith("|"):
            header = []
            continue
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if not header:
            header = parts
        elif set(line) <= set("|- "):
            continue
        else:
            found += [(parts[0], header[i], cell) for i, cell in enumerate(parts) if i]
    return found


@cache
def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_cell_is_a_test_a_refusal_or_not_applicable(page: Path) -> None:
    found = cells(page)
    assert len(found) > 60
    for row, column, cell in found:  # no crossing is left open
        assert cell == "—" or CELL.match(cell), f"{row} × {column}: {cell!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_named_test_exists(page: Path) -> None:
    for row, column, cell in cells(page):
        match = CELL.match(cell)
        if match is None:
            continue
        path = ROOT / "tests" / match["file"]
        assert path.is_file(), f"{row} × {column}: no {path}"
        assert match["test"] in defined_tests(path), f"{row} × {column}: no {match['test']}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_refusal_cell_names_a_test_that_expects_a_user_error(page: Path) -> None:
    for row, column, cell in cells(page):
        match = CELL.match(cell)
        if match is None or not cell.startswith("refused"):
            continue
        source = (ROOT / "tests" / match["file"]).read_text()
        body = source[source.index(f"def {match['test']}(") :].split("\ndef ")[0]
        assert "UserError" in body, f"{row} × {column}: {match['test']} expects no UserError"


def test_the_temporal_guide_has_every_row_of_the_matrix() -> None:
    rows = {row for row, _, _ in cells(GUIDES / "composition.md")}
    assert rows <= {row for row, _, _ in cells(GUIDES / "temporal.md")}
