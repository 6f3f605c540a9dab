"""Tools for the CLI's durable-run tests, loaded with ``--tools tests.cli.approval_tools:TOOLS``.

``publish`` needs approval; every call that runs appends its text to ``$PUBLISH_LOG``, so a
test can count how often a call really executed across processes.
"""

from __future__ import annotations

import os
from pathlib import Path

from ponder.tools import tool


@tool(requires_approval=True)
def publish(text: str) -> str:
    """Publish a text.

    Args:
        text: What to publish.
    """
    log = os.environ.get("PUBLISH_LOG")
    if log:
        with Path(log).open("a") as handle:
            handle.write(text + "\n")
    return f"published {text!r}"


TOOLS = [publish]
NOT_TOOLS = 42


@tool
def shout(text: str) -> str:
    """Say a text loudly.

    Args:
        text: What to say.
    """
    return text.upper()


OTHER_TOOLS = [shout]
"""A tool list without ``publish``: an agent built with it cannot run a pending publish."""
