"""ponder's logs: records under ``ponder.*`` carrying the run id and the VM's pc.

The library prints nothing by default: the ``ponder`` logger has only a
``NullHandler``. Give it a handler (or run the CLI with ``--log-level``) and each run
logs its course — start and end, rounds, steps, model requests, tool calls, failures —
through `get_logger`'s adapters, whose records carry ``run_id``, ``pc`` and ``node``
(``-`` outside a run). While no handler would show a record, runs do not log at all.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

from ponder.events import (
    Event,
    LimitReached,
    LoopDetected,
    ModelDegraded,
    RoundStarted,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    StallDetected,
    StepFinished,
    StepStarted,
    ToolCallFailed,
    ToolCallFinished,
    Usage,
)
from ponder.exceptions import UserError
from ponder.observability.tap import RunTap

if TYPE_CHECKING:
    from ponder.observability.tap import TappedRun
    from ponder.vm import Interpreter

__all__ = [
    "LOG_FORMAT",
    "LogTap",
    "RunLogAdapter",
    "RunRecordDefaults",
    "configure_logging",
    "get_logger",
    "log_tap",
]

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s run=%(run_id)s pc=%(pc)s %(message)s"
ROOT = "ponder"
_current: ContextVar[LogTap | None] = ContextVar("ponder_run_log", default=None)


class RunLogAdapter(logging.LoggerAdapter[logging.Logger]):
    """A logger whose records carry the current run's id, pc and node."""

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        """Add ``run_id``, ``pc`` and ``node`` to the record."""
        tap = _current.get()
        extra = {"run_id": "-", "pc": "-", "node": "-"} if tap is None else tap.where()
        kwargs["extra"] = {**extra, **(kwargs.get("extra") or {})}
        return msg, kwargs


def get_logger(name: str) -> RunLogAdapter:
    """The adapter for logger ``name`` (under ``ponder``)."""
    return RunLogAdapter(logging.getLogger(name))


class RunRecordDefaults(logging.Filter):
    """Fills in ``run_id``, ``pc`` and ``node`` for records that lack them (``-``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record; give it the run fields."""
        for name in ("run_id", "pc", "node"):
            if not hasattr(record, name):
                setattr(record, name, "-")
        return True


def configure_logging(level: str | int, stream: Any = None) -> logging.Handler:
    """Show ponder's records of ``level`` and above on ``stream`` (stderr by default)."""
    chosen = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    if not isinstance(chosen, int):
        raise UserError(f"unknown log level {level!r}: use DEBUG, INFO, WARNING or ERROR")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RunRecordDefaults())
    logger = logging.getLogger(ROOT)
    logger.setLevel(chosen)
    logger.addHandler(handler)
    return handler


def _is_shown(logger: logging.Logger) -> bool:
    """True when some handler other than a NullHandler would get ponder's records."""
    if logger.disabled or not logger.isEnabledFor(logging.CRITICAL):
        return False
    current: logging.Logger | None = logger
    while current is not None:
        if any(not isinstance(h, logging.NullHandler) for h in current.handlers):
            return True
        current = current.parent if current.propagate else None
    return False


def log_tap() -> LogTap | None:
    """A tap logging the run, or None when nothing would show its records."""
    logger = logging.getLogger("ponder.run")
    return LogTap(logger) if _is_shown(logger) else None


class LogTap(RunTap):
    """Logs one run's course from its events; its records carry the run id and pc."""

    def __init__(self, logger: logging.Logger) -> None:
        self.log = RunLogAdapter(logger)
        self.run_id = "-"
        self.pc: int | str = "-"
        self.node_name = "-"
        self._token: Token[LogTap | None] | None = None

    def where(self) -> dict[str, Any]:
        """The record fields for now: run id, pc and node."""
        return {"run_id": self.run_id, "pc": self.pc, "node": self.node_name}

    def attach(self, ctx: TappedRun) -> None:
        """Make this run's fields those of every ponder record logged while it runs."""
        self.run_id = ctx.state.run_id
        self._token = _current.set(self)

    def node(self, vm: Interpreter, pc: int) -> None:
        """Note the pc (and node) the VM runs now."""
        found = vm.program.node_at(pc)
        self.pc, self.node_name = pc, "-" if found is None else found.name
        self.log.debug("node %s", self.node_name)

    def event(self, event: Event) -> None:  # noqa: C901 - one case per event kind
        """Log the events that mark the run's course."""
        log = self.log
        match event:
            case RunStarted():
                log.info("run started: model %s, workflow %s", event.model, event.workflow)
            case RunResumed():
                log.info("run resumed at pc %d", event.pc)
            case RoundStarted():
                log.info("round %d (tool_choice %s)", event.round, event.tool_choice)
            case StepStarted():
                log.info("step %s started (%d/%d)", event.step_id, event.index, event.total)
            case StepFinished():
                log.info("step %s %s", event.step_id, event.status)
            case Usage():
                log.debug(
                    "model response %d: %d tokens in, %d out so far",
                    event.requests,
                    event.input_tokens,
                    event.output_tokens,
                )
            case ToolCallFinished():
                log.info(
                    "tool %s (%s) finished in %.3fs", event.name, event.call_id, event.duration
                )
            case ToolCallFailed():
                log.warning(
                    "tool %s (%s) %s: %s",
                    event.name,
                    event.call_id,
                    event.status,
                    event.error[:300],
                )
            case ModelDegraded():
                log.warning("model %s lacks %s: %s", event.model, event.feature, event.action)
            case LimitReached():
                log.info("limit reached: %s (%d)", event.limit, event.value)
            case LoopDetected() | StallDetected():
                log.warning(
                    "%s: %s repeated %d times, %s",
                    event.kind,
                    event.signature,
                    event.repeats,
                    event.action,
                )
            case RunFinished():
                log.info("run finished: %s", event.stop_reason)
            case RunSuspended():
                log.info("run suspended: %s", event.reason)
            case RunFailed():
                log.error("run failed: %s: %s", event.error_type, event.error[:500])
            case RunCancelled():
                log.warning("run cancelled")
            case _:
                pass

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """Stop giving this run's fields to records."""
        if self._token is not None:
            try:
                _current.reset(self._token)
            except ValueError:  # finished in another context than it started in
                _current.set(None)
            self._token = None
