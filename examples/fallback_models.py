"""Fallback models: when the first model fails for good, the next answers the same request.

Runs offline (``python examples/fallback_models.py``): the first scripted model is
"overloaded", the second answers. With real providers write
``Agent(["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"], ...)``.
"""

from __future__ import annotations

from ponder import Agent
from ponder.exceptions import ModelHTTPError
from ponder.models import FallbackModel, ModelRequest, ModelResponse, ScriptedModel, reply


def overloaded(request: ModelRequest) -> ModelResponse:
    """A provider that keeps answering 503 (its own retries did not help)."""
    raise ModelHTTPError(503, "overloaded", model_name="primary")


def main() -> None:
    """Run one turn and show which model answered."""
    primary = ScriptedModel(overloaded, name="primary")
    backup = ScriptedModel([reply("Hello from the backup model.")], name="backup")
    agent = Agent(FallbackModel(primary, backup), agent_strategy="no-action")
    for event in agent.stream_sync("Say hello."):
        if event.kind == "model_fallback":
            print(f"{event.failed} failed; {event.answered_by} answered")
        elif event.kind == "run_finished":
            print(event.output)


if __name__ == "__main__":
    main()
