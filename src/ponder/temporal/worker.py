"""Building a Temporal worker that runs ponder agents, and the sandbox it runs them in.

``build_worker(client, "queue", agent)`` serves one agent (under the name ``default``);
give a mapping to serve several, and the run names the one it wants. The workflow runs
in Temporal's sandbox; ponder's own modules and the libraries they use are passed
through (imported once, outside), which is safe because a run's only non-deterministic
steps are activities and event times come from the workflow clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio.client import Client
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.temporal.activities import PonderActivities
from ponder.temporal.workflow import PonderWorkflow

__all__ = [
    "PASSTHROUGH_MODULES",
    "PONDER_PASSTHROUGH",
    "build_replayer",
    "build_worker",
    "sandbox_runner",
]

PASSTHROUGH_MODULES = (
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "openai",
    "anthropic",
    "httpx",
    "httpcore",
    "anyio",
    "mcp",
    "platformdirs",
    "jsonschema",
)
"""Libraries ponder imports that the sandbox should not reload for every run."""

PONDER_PASSTHROUGH = (
    "ponder.agent",
    "ponder.config",
    "ponder.events",
    "ponder.exceptions",
    "ponder.mcp",
    "ponder.messages",
    "ponder.models",
    "ponder.observability",
    "ponder.retrieval",
    "ponder.status",
    "ponder.store",
    "ponder.tools",
    "ponder.vm",
    "ponder.temporal.activities",
    "ponder.temporal.channel",
    "ponder.temporal.children",
    "ponder.temporal.client",
    "ponder.temporal.continuation",
    "ponder.temporal.inputs",
    "ponder.temporal.loading",
    "ponder.temporal.memo",
    "ponder.temporal.patching",
    "ponder.temporal.payloads",
    "ponder.temporal.prompts",
    "ponder.temporal.proxies",
    "ponder.temporal.results",
    "ponder.temporal.run_setup",
    "ponder.temporal.spans",
    "ponder.temporal.tracing",
    "ponder.temporal.verbs",
    "ponder.temporal.worker",
)
"""All of ponder but the workflow module itself, which the sandbox loads for each run."""


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The sandbox for ponder's workflow, with ponder's libraries passed through."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(
        *PASSTHROUGH_MODULES, *PONDER_PASSTHROUGH
    )
    return SandboxedWorkflowRunner(restrictions=restrictions)


def _agents(agents: Agent[Any] | Mapping[str, Agent[Any]]) -> dict[str, Agent[Any]]:
    found = {"default": agents} if isinstance(agents, Agent) else dict(agents)
    if not found or not all(isinstance(a, Agent) for a in found.values()):
        raise UserError("build_worker needs an Agent or a mapping from names to Agents")
    return found


def _refuse_local_only(name: str, agent: Agent[Any]) -> None:
    """`UserError` for an agent that uses what runs only locally, naming both."""
    if agent.output_type is not None:
        raise UserError(
            f"agent {name!r}: output_type is not supported on Temporal (build_worker): "
            "a run there answers in text"
        )
    if agent.record is not None:
        raise UserError(
            f"agent {name!r}: record= is not supported on Temporal (build_worker): the "
            "workflow's history is the record (replay it with build_replayer())"
        )


def build_worker(
    client: Client,
    task_queue: str,
    agents: Agent[Any] | Mapping[str, Agent[Any]],
    *,
    deps: Any = None,
    **options: Any,
) -> Worker:
    """A worker on ``task_queue`` for ``agents``; ``deps`` reaches every tool call.

    An agent (or sub-agent) with an ``output_type`` or ``record`` is refused (`UserError`).

    Other keyword options go to ``temporalio.worker.Worker`` (for example
    ``max_concurrent_activities``).
    """
    if not task_queue:
        raise UserError("build_worker needs a task queue name")
    activities = PonderActivities(_agents(agents), deps=deps, client=client)
    for name, agent in activities.agents.items():
        _refuse_local_only(name, agent)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[PonderWorkflow],
        activities=activities.all(),
        workflow_runner=sandbox_runner(),
        **options,
    )


def build_replayer(**options: Any) -> Replayer:
    """A `Replayer` for ponder's workflow, to check recorded histories for determinism."""
    return Replayer(workflows=[PonderWorkflow], workflow_runner=sandbox_runner(), **options)
