"""Every third-party package that ``src/ponder`` imports is declared in pyproject.toml."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ponder"


def imported_top_level_modules() -> dict[str, set[str]]:
    """Top-level module → the files under src/ponder that import it."""
    found: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for item in ast.walk(tree):
            if isinstance(item, ast.Import):
                names = [alias.name for alias in item.names]
            elif isinstance(item, ast.ImportFrom) and item.level == 0 and item.module:
                names = [item.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra, extras in project.get("optional-dependencies", {}).items():
        if extra != "dev":
            requirements += extras
    return {_normalise(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]) for r in requirements}


# import names of declared distributions that `make test` does not install
NOT_INSTALLED = {"llama_cpp": "llama-cpp-python"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_distribution_is_declared() -> None:
    distributions = packages_distributions()
    declared = declared_distributions()
    missing = {}
    for module, files in imported_top_level_modules().items():
        if module in sys.stdlib_module_names or module in ("ponder", "__future__"):
            continue
        owners = {
            _normalise(d) for d in distributions.get(module, [NOT_INSTALLED.get(module, module)])
        }
        if not owners & declared:
            missing[module] = sorted(files)
    assert missing == {}
