"""Images and files in the prompt, and a tool that returns an image.

Runs offline (``python examples/images_and_files.py``) on a scripted model that reports
what it was sent; with ``"openai:gpt-4o-mini"`` or ``"anthropic:..."`` the same prompt goes
out as content parts or blocks.
"""

from __future__ import annotations

from ponder import Agent, tool
from ponder.media import File, Image
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # the first bytes of a PNG are enough to tell
PDF = b"%PDF-1.4\n"


@tool
def chart(series: str) -> Image:
    """Draw a chart of a series.

    Args:
        series: The series' name.
    """
    return Image(PNG)


def describe(request: ModelRequest) -> str:
    """Say which images and files the request carried."""
    seen = [
        f"{m.kind}:{a.kind}:{a.media_type}"
        for m in request.messages
        if isinstance(m, UserMessage | ToolMessage)
        for a in m.attachments
    ]
    return "I was sent " + ", ".join(seen)


def main() -> None:
    """Ask about an image and a PDF, with a tool that returns a chart."""
    model = ScriptedModel(
        [
            call_tools(("chart", {"series": "sales"})),
            call_tools(("agent_stop", {"result": "drawn"})),
            describe,
        ]
    )
    agent = Agent(model, tools=[chart], agent_thought_mode="chat", enable_thinking_tool=False)
    prompt = ["Compare the photo, the report and a sales chart.", Image(PNG), File(PDF)]
    print(agent.run_sync(prompt).output)


if __name__ == "__main__":
    main()
