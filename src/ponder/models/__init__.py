"""Language models: the `Model` protocol, provider adapters and test doubles."""

from ponder.models.base import (
    ForceTool,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    Usage,
)

__all__ = [
    "ForceTool",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputSchema",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDefinition",
    "Usage",
]
