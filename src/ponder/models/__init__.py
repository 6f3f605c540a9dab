"""Language models: the `Model` protocol, provider adapters and test doubles.

The provider adapters (`OpenAIModel`, `AnthropicModel`) are imported on first use, so
``import ponder.models`` stays fast and the ``anthropic`` SDK stays optional.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from ponder.models.fallback import FallbackModel
from ponder.models.registry import resolve_model
from ponder.models.retry import RetryPolicy
from ponder.models.scripted import ScriptedModel, call_tools, reply
from ponder.models.structured import is_strict_schema, output_schema, parse_structured
from ponder.models.tokens import estimate_messages_tokens, estimate_tokens

if TYPE_CHECKING:
    from ponder.models.anthropic import AnthropicModel
    from ponder.models.openai import OpenAIModel

__all__ = [
    "AnthropicModel",
    "FallbackModel",
    "ForceTool",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
    "OutputSchema",
    "ReasoningDelta",
    "RetryPolicy",
    "ScriptedModel",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDefinition",
    "Usage",
    "call_tools",
    "estimate_messages_tokens",
    "estimate_tokens",
    "is_strict_schema",
    "output_schema",
    "parse_structured",
    "reply",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIModel":
        from ponder.models.openai import OpenAIModel

        return OpenAIModel
    if name == "AnthropicModel":
        from ponder.models.anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module 'ponder.models' has no attribute {name!r}")
