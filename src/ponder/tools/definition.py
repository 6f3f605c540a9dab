"""What a model is told about the tools it may call: `ToolDefinition` and `ToolChoice`.

These belong to ``ponder.tools`` so that tools do not depend on the model layer;
``ponder.models`` re-exports them for the requests it builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ForceTool", "ToolChoice", "ToolDefinition"]


class ToolDefinition(BaseModel):
    """What the model is told about one tool: name, description, JSON Schema of arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False


@dataclass(frozen=True, slots=True)
class ForceTool:
    """A tool choice that forces the model to call one named tool."""

    name: str


ToolChoice = Literal["auto", "required", "none"] | ForceTool
