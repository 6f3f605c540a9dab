"""What crosses the wire between a ponder workflow and its activities, as plain JSON data.

Every activity takes one JSON object and returns one, so histories stay readable
(``temporal workflow show``) and replay needs nothing but ponder itself. The helpers
here turn ponder's types (requests, responses, tool calls and outcomes) into that data
and back; they do no I/O and are safe inside the workflow sandbox.
"""

from __future__ import annotations

from typing import Any

from ponder.messages import ToolCallPart, ToolMessage, messages_from_json, messages_to_json
from ponder.models.base import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    ToolChoice,
    ToolDefinition,
)
from ponder.tools.executor import ToolOutcome, ToolStatus
from ponder.tools.tool import Tool, ToolResult

__all__ = [
    "outcome_from_data",
    "outcome_to_data",
    "request_from_data",
    "request_to_data",
    "response_from_data",
    "response_to_data",
    "tool_spec",
]


def _choice_to_data(choice: ToolChoice) -> Any:
    return {"force": choice.name} if isinstance(choice, ForceTool) else choice


def _choice_from_data(data: Any) -> ToolChoice:
    if isinstance(data, dict):
        return ForceTool(str(data["force"]))
    if data in ("auto", "required", "none"):
        return data  # type: ignore[no-any-return]
    raise ValueError(f"unknown tool choice {data!r}")


def request_to_data(request: ModelRequest) -> dict[str, Any]:
    """A model request as JSON data (the whole conversation it sends)."""
    return {
        "messages": messages_to_json(request.messages),
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "tool_choice": _choice_to_data(request.tool_choice),
        "output": None if request.output is None else request.output.model_dump(mode="json"),
        "settings": request.settings.model_dump(mode="json"),
        "prefix_tools": [t.model_dump(mode="json") for t in request.prefix_tools],
    }


def request_from_data(data: dict[str, Any]) -> ModelRequest:
    """The request ``request_to_data`` wrote."""
    output = data.get("output")
    return ModelRequest(
        messages=messages_from_json(data["messages"]),
        tools=[ToolDefinition.model_validate(t) for t in data.get("tools", ())],
        tool_choice=_choice_from_data(data.get("tool_choice", "auto")),
        output=None if output is None else OutputSchema.model_validate(output),
        settings=ModelSettings.model_validate(data.get("settings") or {}),
        prefix_tools=[ToolDefinition.model_validate(t) for t in data.get("prefix_tools", ())],
    )


def response_to_data(response: ModelResponse) -> dict[str, Any]:
    """A model response as JSON data."""
    return response.model_dump(mode="json")


def response_from_data(data: dict[str, Any]) -> ModelResponse:
    """The response ``response_to_data`` wrote."""
    return ModelResponse.model_validate(data)


def tool_spec(tool: Tool) -> dict[str, Any]:
    """What a workflow needs to know about a tool: its definition and how to run it."""
    return {
        "definition": tool.definition.model_dump(mode="json"),
        "requires_approval": tool.requires_approval,
        "idempotent": tool.idempotent,
        "stateful": tool.state_type is not None,
        "builtin": tool.builtin,
        "timeout": tool.timeout,
    }


def outcome_to_data(outcome: ToolOutcome) -> dict[str, Any]:
    """How one call ended, as JSON data (the call itself stays with the workflow)."""
    return {
        "result": outcome.result.model_dump(mode="json"),
        "status": outcome.status,
        "duration": outcome.duration,
        "message": outcome.message.model_dump(mode="json"),
        "truncated_chars": outcome.truncated_chars,
    }


def outcome_from_data(call: ToolCallPart, data: dict[str, Any]) -> ToolOutcome:
    """The outcome of ``call`` that ``outcome_to_data`` wrote."""
    status: ToolStatus = data["status"]
    return ToolOutcome(
        call=call,
        result=ToolResult.model_validate(data["result"]),
        status=status,
        duration=float(data.get("duration", 0.0)),
        message=ToolMessage.model_validate(data["message"]),
        truncated_chars=int(data.get("truncated_chars", 0)),
    )
