"""ponder on Temporal: runs as durable workflows, model and tool calls as activities.

```python
from ponder.temporal import TemporalAgent, build_worker, connect

client = await connect("localhost:7233")
worker = build_worker(client, "agents", agent)         # on each worker machine
async with worker:
    remote = TemporalAgent(client, "agents")             # anywhere
    result = await remote.run("What is 2+3?")
```

Needs the ``temporal`` extra: ``pip install 'ponder[temporal]'``.
"""

from __future__ import annotations

from ponder.extras import require

require("temporal", "ponder.temporal (runs on Temporal)")

from temporalio import workflow as _workflow

# Imported in a workflow sandbox too (it loads this package to reach the workflow module):
# all of ponder but the workflow module comes from the host, as `sandbox_runner` has it,
# so a Replayer built without it still sees one copy of each ponder class.
with _workflow.unsafe.imports_passed_through():
    from ponder.temporal.activities import PonderActivities
    from ponder.temporal.client import (
        TemporalAgent,
        TemporalRunError,
        TemporalServiceError,
        TemporalUnreachableError,
        WorkerUnavailableError,
        connect,
        result_from_data,
    )
    from ponder.temporal.continuation import HistoryBudget
    from ponder.temporal.patching import patched
    from ponder.temporal.worker import build_replayer, build_worker, sandbox_runner

from ponder.temporal.workflow import WORKFLOW_NAME, PonderWorkflow

__all__ = [
    "WORKFLOW_NAME",
    "HistoryBudget",
    "PonderActivities",
    "PonderWorkflow",
    "TemporalAgent",
    "TemporalRunError",
    "TemporalServiceError",
    "TemporalUnreachableError",
    "WorkerUnavailableError",
    "build_replayer",
    "build_worker",
    "connect",
    "patched",
    "result_from_data",
    "sandbox_runner",
]
