"""`A2AAgent`: a remote A2A agent as a tool of a ponder agent.

```python
agent = Agent(model, tools=[A2AAgent("http://other:8000", name="researcher")])
```

Each call sends the model's ``task`` to the remote agent (its card is read from
``/.well-known/agent-card.json``) and streams the task: its status updates reach the
caller's event stream as `SubAgentEvent`s under the call, its artifacts are the result
(data parts as JSON). A remote task that needs input comes back as a failed call naming
the task and what it asks; calling again with that ``task_id`` answers it. A card that
cannot be read, a task that fails, an HTTP error or the ``timeout`` is a clear error
result, never a crash of the run.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from ponder.extras import require

require("a2a", "A2AAgent (a remote A2A agent as a tool)")

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_data_parts, get_message_text, get_text_parts, new_text_message
from a2a.types.a2a_pb2 import Role, SendMessageRequest, StreamResponse, Task, TaskState
from a2a.utils.errors import A2AError

from ponder.events import SubAgentEvent
from ponder.tools.tool import Tool, ToolContext, ToolResult

__all__ = ["A2AAgent", "a2a_agent"]

_PARAMETERS = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "description": "What the remote agent should do."},
        "task_id": {
            "type": "string",
            "description": "Only to answer a task of this agent that asked for input: its id.",
        },
    },
    "required": ["task"],
    "additionalProperties": False,
}
_ENDED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
_WAITING = {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}


def _state_name(state: Any) -> str:
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _default_name(url: str) -> str:
    host = re.sub(r"^https?://", "", url).split("/")[0]
    return "a2a_" + re.sub(r"[^A-Za-z0-9_]", "_", host).strip("_")


def _answer_of(task: Task) -> tuple[str, list[Any]]:
    """The text and the data of a task's artifacts."""
    texts: list[str] = []
    data: list[Any] = []
    for artifact in task.artifacts:
        texts += get_text_parts(list(artifact.parts))
        data += get_data_parts(list(artifact.parts))
    text = "\n".join(texts) or "\n".join(json.dumps(d, ensure_ascii=False) for d in data)
    return text, data


class _Call:
    """One call: the remote task as its stream reports it."""

    def __init__(self, name: str, ctx: ToolContext) -> None:
        self.name, self.ctx = name, ctx
        self.task = Task()

    def emit(self, event: dict[str, Any]) -> None:
        parent = self.ctx.run
        if parent is not None and parent.streams:
            sub = SubAgentEvent(call_id=self.ctx.call_id, agent=self.name, event=event)
            parent.bus.emit_now(sub)

    def take(self, item: StreamResponse) -> None:
        """Fold one streamed item into the task."""
        if item.HasField("task"):
            self.task.CopyFrom(item.task)
            self.emit(
                {
                    "kind": "a2a_task",
                    "task_id": item.task.id,
                    "state": _state_name(item.task.status.state),
                }
            )
        elif item.HasField("status_update"):
            update = item.status_update
            self.task.id = self.task.id or update.task_id
            self.task.status.CopyFrom(update.status)
            said = (
                get_message_text(update.status.message) if update.status.HasField("message") else ""
            )
            self.emit(
                {
                    "kind": "a2a_status",
                    "task_id": update.task_id,
                    "state": _state_name(update.status.state),
                    "text": said,
                }
            )
        elif item.HasField("artifact_update"):
            self.task.artifacts.append(item.artifact_update.artifact)
        elif item.HasField("message"):
            self.task.status.state = TaskState.TASK_STATE_COMPLETED
            self.task.artifacts.add(parts=item.message.parts)

    def result(self) -> ToolResult:
        task, state = self.task, self.task.status.state
        info = {"task_id": task.id, "state": _state_name(state)}
        said = get_message_text(task.status.message) if task.status.HasField("message") else ""
        if state == TaskState.TASK_STATE_COMPLETED:
            text, data = _answer_of(task)
            return ToolResult.ok(text, data={**info, "data": data})
        if state in _WAITING:
            return ToolResult.fail(
                f"the remote agent {self.name!r} needs input for task {task.id}: {said} "
                "(call again with this task_id and the answer as the task)",
                data={**info, "asks": get_data_parts(list(task.status.message.parts))},
            )
        if state in _ENDED:
            return ToolResult.fail(
                f"the remote agent's task {task.id} {info['state']}: {said}".rstrip(": "), data=info
            )
        return ToolResult.fail(
            f"the remote agent's stream ended with task {task.id} {info['state']}", data=info
        )


def a2a_agent(
    url: str,
    *,
    name: str | None = None,
    description: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
    card_path: str | None = None,
) -> Tool:
    """The tool that hands a task to the A2A agent at ``url`` (its base URL).

    ``headers`` go with every request (``{"Authorization": "Bearer ..."}``); a call that
    takes longer than ``timeout`` seconds is an error result.
    """
    tool_name = name or _default_name(url)

    async def call(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        run = _Call(tool_name, ctx)
        try:
            async with asyncio.timeout(timeout):
                return await _send(url, run, args, headers or {}, card_path)
        except TimeoutError:
            return ToolResult.fail(f"the remote agent {tool_name!r} did not finish in {timeout:g}s")

    return Tool(
        name=tool_name,
        description=description or f"Hand a task to the remote A2A agent at {url}.",
        parameters=_PARAMETERS,
        function=call,
        timeout=timeout + 5,
        metadata={"a2a_url": url},
    )


A2AAgent = a2a_agent
"""``A2AAgent(url, ...)``: the tool of a remote A2A agent (see `a2a_agent`)."""


async def _send(
    url: str, run: _Call, args: dict[str, Any], headers: dict[str, str], card_path: str | None
) -> ToolResult:
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30.0, read=None)) as http:
        try:
            client = await create_client(
                url, ClientConfig(streaming=True, httpx_client=http), relative_card_path=card_path
            )
        except (A2AError, httpx.HTTPError, ValueError) as error:
            return ToolResult.fail(f"no usable A2A agent card at {url}: {error}")
        message = new_text_message(str(args["task"]), role=Role.ROLE_USER)
        if args.get("task_id"):
            message.task_id = str(args["task_id"])
        try:
            async for item in client.send_message(SendMessageRequest(message=message)):
                run.take(item)
        except (A2AError, httpx.HTTPError) as error:
            kind = type(error).__name__
            return ToolResult.fail(f"the remote agent at {url} refused the task ({kind}): {error}")
        finally:
            await client.close()
    return run.result()
