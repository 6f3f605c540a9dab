"""Loading a run's strategy class inside the workflow, by the import path in its history."""

from __future__ import annotations

from temporalio import workflow

from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.rag import RagStrategy
from ponder.exceptions import UserError
from ponder.temporal.proxies import ActivityOptions, ActivityRetriever

__all__ = ["strategy_at"]


_RELOADED = (
    "ponder's modules were loaded a second time inside the workflow sandbox: build workers "
    "with ponder.temporal.build_worker() and replayers with build_replayer() (or pass "
    "ponder.temporal.sandbox_runner() as workflow_runner)"
)


def strategy_at(
    path: str, options: ActivityOptions, *, retrieves: bool = True
) -> type[AgentStrategy]:
    """The strategy class at ``path``; its module is passed through, like ponder's own.

    A RAG strategy that ``retrieves`` (from the worker's index) asks a worker to retrieve.
    """
    module, _, name = path.partition(":")
    with workflow.unsafe.imports_passed_through():
        # __import__, not importlib: the sandbox sees (and passes through) only the former
        found = getattr(__import__(module, fromlist=[name]), name)
    if not (isinstance(found, type) and issubclass(found, AgentStrategy)):
        if isinstance(found, type) and "AgentStrategy" in {c.__name__ for c in found.__mro__}:
            raise RuntimeError(_RELOADED)  # fails the task (retried), not the run
        raise UserError(f"{path!r} is not an AgentStrategy")
    if issubclass(found, RagStrategy) and retrieves:
        return found.using(ActivityRetriever(options))
    return found
