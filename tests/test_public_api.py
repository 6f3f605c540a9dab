"""The public surface: what ``ponder`` exports, and that every module declares ``__all__``."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import ponder

EXPECTED = {
    "Agent", "AgentConfig", "AgentStrategy", "OutputSpec", "PonderError", "RunError",
    "RunResult", "RunStream", "Tool", "ToolContext", "ToolResult", "UsageLimits", "UserError",
    "load_config", "tool", "__version__", "ReplayModel", "instrument",
}  # fmt: skip


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
