"""Tools: definition (``@tool``, `make_tool`), argument handling, registry and executor.

```python
@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

executor = ToolExecutor(ToolRegistry([add]))
outcomes = await executor.run_batch(calls, run_id="r1", states={})
```
"""

from ponder.tools.arguments import ArgumentError, ArgumentIssue, parse_arguments_lenient
from ponder.tools.conform import SchemaConformer
from ponder.tools.decorator import ToolOptions, make_tool, to_tool_result, tool
from ponder.tools.definition import ForceTool, ToolChoice, ToolDefinition
from ponder.tools.executor import ToolExecutor, ToolOutcome, ToolStatus, truncate_output
from ponder.tools.registry import ToolRegistry
from ponder.tools.tool import Tool, ToolContext, ToolFunction, ToolResult, ToolValidator

__all__ = [
    "ArgumentError",
    "ArgumentIssue",
    "ForceTool",
    "SchemaConformer",
    "Tool",
    "ToolChoice",
    "ToolContext",
    "ToolDefinition",
    "ToolExecutor",
    "ToolFunction",
    "ToolOptions",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResult",
    "ToolStatus",
    "ToolValidator",
    "make_tool",
    "parse_arguments_lenient",
    "to_tool_result",
    "tool",
    "truncate_output",
]
