"""The public surface: what ``ponder`` exports, and that every module declares ``__all__``."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import ponder

EXPECTED = {
    "Agent",
    "AgentConfig",
    "AgentStrategy",
    "OutputSpec",
    "PonderError",
    "RunError",
    "RunResult",
    "RunStream",
    "Tool",
    "ToolContext",
    "ToolResult",
    "UsageLimits",
    "UserError",
    "load_config",
    "tool",
    "__version__",
    "ReplayModel",
    "instrument",
}


def test_the_exported_names_are_exactly_the_public_api() -> None:
    assert set(ponder.__all__) == EXPECTED
    for name in ponder.__all__:
        assert getattr(ponder, name) is not None
    assert sorted(dir(ponder)) == sorted(EXPECTED)


def test_every_module_declares_all_and_its_names_exist() -> None:
    missing = []
    for info in pkgutil.walk_packages(ponder.__path__, "ponder."):
        if info.name.endswith("__main__") or info.name == "ponder.mcp.thinking.server":
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", None)
        if names is None:
            missing.append(info.name)
            continue
        for name in names:
            assert hasattr(module, name), f"{info.name}.__all__ names {name!r}, not defined"
    assert missing == []


def test_import_ponder_is_lazy() -> None:
    code = (
        "import sys, ponder; heavy = [m for m in ('pydantic', 'openai', 'mcp', 'rich', "
        "'fastapi', 'ponder.agent') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_version_is_the_package_version() -> None:
    from importlib.metadata import version

    assert ponder.__version__ == version("ponder")


ENTRY_MODULES = {
    "ponder.protocols.agui",
    "ponder.protocols.a2a_client",
    "ponder.protocols.a2a_server",
}
"""Modules a package's docstring names as its entry points (CONTRIBUTING.md, "Public names")."""


def _is_public(module: str) -> bool:
    """The rule of CONTRIBUTING.md: packages, top-level modules and the named entry points."""
    if module in ENTRY_MODULES or module.count(".") == 1:
        return True
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


def _imported_modules(text: str) -> set[str]:
    return set(re.findall(r"^\s*from (ponder(?:\.\w+)*) import", text, flags=re.MULTILINE))


def test_examples_and_docs_import_only_public_modules() -> None:
    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text() for p in sorted((root / "examples").glob("*.py"))]
    texts += [p.read_text() for p in sorted((root / "docs").rglob("*.md"))]
    texts.append((root / "README.md").read_text())
    found = set().union(*(_imported_modules(t) for t in texts))
    assert "ponder.models" in found  # the scan reads the files it should
    assert sorted(m for m in found if not _is_public(m)) == []


def test_the_rule_tells_internal_modules_apart() -> None:
    assert _is_public("ponder.agent") and _is_public("ponder.messages")
    assert _is_public("ponder.protocols.agui")
    assert not _is_public("ponder.agent.run.context")
    assert not _is_public("ponder.server.local_launcher")
