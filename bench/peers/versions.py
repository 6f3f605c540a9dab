"""Print the installed versions of the peer packages as one JSON document."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version

PACKAGES = (
    "agno",
    "amrita-core",
    "amrita-sense",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint-sqlite",
    "langchain-core",
    "pydantic-ai-slim",
    "openai-agents",
    "smolagents",
)


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    print(json.dumps({"versions": {name: _version(name) for name in PACKAGES}}))
