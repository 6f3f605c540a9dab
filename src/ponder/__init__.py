"""ponder — an agent runtime whose think–act loop is a program run by an instruction VM.

```python
from ponder import Agent, tool

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

agent = Agent("openai:gpt-4o-mini", tools=[add], instructions="Be brief.")
result = agent.run_sync("What is 2+3?")
```

Names are imported on first use, so ``import ponder`` stays cheap.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from ponder._version import __version__

logging.getLogger("ponder").addHandler(logging.NullHandler())  # nothing is printed by default

_EXPORTS = {
    "Agent": "ponder.agent",
    "AgentStrategy": "ponder.agent",
    "RunResult": "ponder.agent",
    "RunStream": "ponder.agent",
    "OutputSpec": "ponder.agent",
    "UsageLimits": "ponder.agent",
    "AgentConfig": "ponder.config",
    "load_config": "ponder.config",
    "Tool": "ponder.tools",
    "ToolContext": "ponder.tools",
    "ToolResult": "ponder.tools",
    "tool": "ponder.tools",
    "PonderError": "ponder.exceptions",
    "RunError": "ponder.exceptions",
    "UserError": "ponder.exceptions",
    "ReplayModel": "ponder.replay",
    "instrument": "ponder.observability.instrumentation",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentStrategy",
    "OutputSpec",
    "PonderError",
    "ReplayModel",
    "RunError",
    "RunResult",
    "RunStream",
    "Tool",
    "ToolContext",
    "ToolResult",
    "UsageLimits",
    "UserError",
    "__version__",
    "instrument",
    "load_config",
    "tool",
]

if TYPE_CHECKING:
    from ponder.agent import (
        Agent,
        AgentStrategy,
        OutputSpec,
        RunResult,
        RunStream,
        UsageLimits,
    )
    from ponder.config import AgentConfig, load_config
    from ponder.exceptions import PonderError, RunError, UserError
    from ponder.observability.instrumentation import instrument
    from ponder.replay import ReplayModel
    from ponder.tools import Tool, ToolContext, ToolResult, tool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ponder' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
