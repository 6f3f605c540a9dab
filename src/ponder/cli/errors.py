"""Turning an exception into one clear line with a hint, and the exit code to use."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ponder.exceptions import (
    ConfigError,
    ModelConnectionError,
    ModelHTTPError,
    ModelTimeoutError,
    PonderError,
    RunError,
    RunLeaseError,
    SnapshotError,
    StoreError,
    UserError,
)

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_PIPE_CLOSED",
    "EXIT_RUN_FAILED",
    "EXIT_SUSPENDED",
    "EXIT_USAGE",
    "Failure",
    "describe_failure",
]

EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_SUSPENDED = 3
EXIT_INTERRUPTED = 130
# the reader of stdout went away (`ponder dis | head`): the status of a process that SIGPIPE ends
EXIT_PIPE_CLOSED = 141
_KEY_VARIABLE = re.compile(r"set the (\w+) environment variable")


@dataclass(frozen=True, slots=True)
class Failure:
    """What to print (one line) and the process exit code."""

    line: str
    exit_code: int


def _with_hint(message: str, hint: str) -> str:
    return f"error: {message.rstrip('.')} (hint: {hint})"


def _user_failure(error: UserError) -> Failure:
    message = " ".join(str(error).split())
    if isinstance(error, ConfigError):
        hint = f"fix {error.key!r} in the config file or the PONDER_* environment variable"
        return Failure(_with_hint(f"invalid configuration: {message}", hint), EXIT_USAGE)
    found = _KEY_VARIABLE.search(message)
    if found:
        hint = f"export {found.group(1)}=<your key>, or set api_key in the config file"
        return Failure(_with_hint(message.split(":")[0], hint), EXIT_USAGE)
    if message.startswith("no model given"):
        hint = "pass --model openai:gpt-4o-mini or set model in ponder.toml"
        return Failure(_with_hint("no model given", hint), EXIT_USAGE)
    return Failure(_with_hint(message, "see `ponder --help`"), EXIT_USAGE)


def _store_failure(error: RunError) -> Failure | None:
    message = " ".join(str(error).split())
    if isinstance(error, RunLeaseError):
        hint = "wait for the other process, or stop it with `ponder runs cancel`"
        return Failure(_with_hint(message, hint), EXIT_RUN_FAILED)
    if isinstance(error, StoreError) and "before its first checkpoint" in message:
        return Failure(_with_hint(message, "start the task again with `ponder run`"), 1)
    if isinstance(error, StoreError) and message.startswith("no stored run"):
        hint = "see `ponder runs list` for the runs in this store"
        return Failure(_with_hint(message, hint), EXIT_USAGE)
    if isinstance(error, StoreError):
        hint = "check --store or PONDER_STORE (sqlite:///PATH, a path, or postgresql://...)"
        return Failure(_with_hint(message, hint), EXIT_RUN_FAILED)
    if isinstance(error, SnapshotError):
        hint = "resume with the same --model, --config, --workflow and --tools the run used"
        return Failure(_with_hint(f"cannot resume: {message}", hint), EXIT_USAGE)
    return None


def _run_failure(error: RunError, base_url: str | None) -> Failure:
    stored = _store_failure(error)
    if stored is not None:
        return stored
    where = base_url or "the provider's default URL"
    if isinstance(error, ModelConnectionError):
        hint = "check the URL and your network, or set base_url / OPENAI_BASE_URL"
        return Failure(_with_hint(f"cannot reach the model at {where}", hint), EXIT_RUN_FAILED)
    if isinstance(error, ModelTimeoutError):
        hint = "raise llm_timeout in the config, or check the server"
        return Failure(_with_hint(f"the model at {where} did not answer in time", hint), 1)
    if isinstance(error, ModelHTTPError) and error.status_code in (401, 403):
        message = f"the model provider at {where} refused the API key (HTTP {error.status_code})"
        return Failure(_with_hint(message, "check the key you exported"), EXIT_RUN_FAILED)
    message = " ".join(str(error).split())
    return Failure(
        _with_hint(f"run failed: {type(error).__name__}: {message}", "retry, or run with --json"),
        EXIT_RUN_FAILED,
    )


def describe_failure(error: BaseException, *, base_url: str | None = None) -> Failure:
    """The line and exit code for ``error``; ``base_url`` names where the model lives."""
    if isinstance(error, KeyboardInterrupt):
        return Failure("interrupted", EXIT_INTERRUPTED)
    if isinstance(error, UserError):
        return _user_failure(error)
    if isinstance(error, RunError):
        return _run_failure(error, base_url)
    if isinstance(error, PonderError):
        return Failure(_with_hint(str(error), "see `ponder --help`"), EXIT_RUN_FAILED)
    message = f"unexpected {type(error).__name__}: {error}"
    return Failure(_with_hint(message, "this is a bug in ponder; please report it"), 1)
