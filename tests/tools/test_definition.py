"""Tool definitions live in ``ponder.tools``, which does not import the model layer."""

from __future__ import annotations

import subprocess
import sys

import ponder.models
import ponder.models.base
import ponder.tools


def test_importing_the_tools_loads_no_model_module() -> None:
    code = (
        "import sys, ponder.tools; "
        "print(sorted(m for m in sys.modules if m.startswith('ponder.models')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_model_layer_re_exports_the_same_types() -> None:
    for name in ("ToolDefinition", "ToolChoice", "ForceTool"):
        assert getattr(ponder.models, name) is getattr(ponder.tools, name)
        assert getattr(ponder.models.base, name) is getattr(ponder.tools, name)


def test_a_tool_s_definition_is_a_tools_type() -> None:
    @ponder.tools.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    definition = add.definition
    assert isinstance(definition, ponder.tools.ToolDefinition)
    assert definition.name == "add" and set(definition.parameters["properties"]) == {"a", "b"}
