"""A2A tasks as ponder runs: the task of a run record, and a task store backed by runs.

A task's id is its run's id. The SDK keeps the tasks it saves in memory; a task it does
not know (the server restarted, or another process started the run) is rebuilt from the
run in ponder's store, so a task lives as long as its run.
"""

from __future__ import annotations

import json
from typing import Any

from ponder.extras import require

require("a2a", "the A2A server")

from a2a.helpers import new_data_part, new_message, new_text_artifact, new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

from ponder.exceptions import UserError
from ponder.server.launcher import Launcher
from ponder.server.runs import RunRecord
from ponder.store.view import pending_calls, pending_questions

__all__ = ["RunTaskStore", "answer_artifact", "state_of", "status_message", "task_of"]

_STATES: dict[str, int] = {
    "running": TaskState.TASK_STATE_WORKING,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
    "suspended": TaskState.TASK_STATE_INPUT_REQUIRED,
}


def state_of(record: RunRecord) -> Any:
    """The A2A task state of a run."""
    return _STATES.get(record.status, TaskState.TASK_STATE_WORKING)


def answer_artifact(record: RunRecord) -> Artifact:
    """The run's answer: text, or for a typed run its JSON as a data part."""
    text = record.output or ""
    if record.is_typed:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if data is not None:
            return Artifact(artifact_id="answer", name="answer", parts=[new_data_part(data)])
    return new_text_artifact("answer", text, artifact_id="answer")


def _waits_for(record: RunRecord) -> tuple[str, dict[str, Any]]:
    """What a suspended run waits for, in words and as data."""
    calls = pending_calls(record.suspension)
    if calls:
        names = ", ".join(str(c.get("name")) for c in calls)
        text = (
            f"The agent waits for approval of {names}. Reply 'approve' or 'reject', or send "
            'a data part {"decision": ...} with a decision per call id.'
        )
        return text, {"reason": "approval", "pending_calls": calls}
    questions = pending_questions(record.suspension)
    if questions:
        asked = "; ".join(str(q.get("message", "")) for q in questions)
        text = (
            f"The agent asks: {asked}. Reply with a data part holding the answer "
            "(or 'decline' / 'cancel')."
        )
        return text, {"reason": "elicitation", "questions": questions}
    reason = str((record.suspension or {}).get("reason", "input"))
    return "The agent waits for input.", {"reason": reason}


def status_message(record: RunRecord, context_id: str) -> Message | None:
    """The message a task's status carries: what an input-required task waits for, an error."""
    parts: list[Part]
    if record.status == "suspended":
        text, data = _waits_for(record)
        parts = [new_text_part(text), new_data_part(data)]
    elif record.status in ("failed", "cancelled") and record.error:
        parts = [new_text_part(record.error)]
    else:
        return None
    return new_message(parts, context_id=context_id, task_id=record.run_id, role=Role.ROLE_AGENT)


def task_of(record: RunRecord, context_id: str | None = None) -> Task:
    """The A2A task of a run (its context is the run's own unless one is given)."""
    context = context_id or record.run_id
    prompt = new_message([new_text_part(record.prompt)], context_id=context, task_id=record.run_id)
    prompt.role = Role.ROLE_USER
    status = TaskStatus(state=state_of(record))
    message = status_message(record, context)
    if message is not None:
        status.message.CopyFrom(message)
    task = Task(id=record.run_id, context_id=context, status=status, history=[prompt])
    if record.status == "completed":
        task.artifacts.append(answer_artifact(record))
    return task


class RunTaskStore(InMemoryTaskStore):
    """The SDK's in-memory task store, falling back to the runs the launcher can find."""

    def __init__(self, launcher: Launcher) -> None:
        super().__init__()
        self.launcher = launcher
        self.contexts: dict[str, str] = {}
        """The context of each task started here (a rebuilt task's is its run id)."""

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task: as last saved here, else rebuilt from its run (None if unknown)."""
        found = await super().get(task_id, context)
        if found is not None:
            return found
        try:
            record = await self.launcher.lookup(task_id) if task_id else None
        except UserError:  # an ambiguous prefix is no task id
            return None
        if record is None or record.run_id != task_id:
            return None
        task = task_of(record, self.contexts.get(task_id))
        await self.save(task, context)
        return task
