"""The exceptions ponder raises.

```
PonderError                      base of everything ponder raises
├── UserError                    misuse by the programmer: bad config, unknown model string
│   ├── ConfigError              an invalid configuration value (names the key)
│   └── CompileError             a malformed VM program (names the construct)
├── RunError                     a run failed
│   ├── ModelError               the model provider failed
│   │   ├── ModelHTTPError       an HTTP error status from the provider
│   │   │   └── ContextOverflowError  the prompt is longer than the model's window
│   │   ├── ModelTimeoutError    the request took longer than its total timeout
│   │   ├── ModelConnectionError the provider could not be reached
│   │   └── ModelResponseError   the provider answered with something unusable
│   │       ├── EmptyStreamError the provider opened a stream and sent nothing in it
│   │       └── StructuredOutputError  the model's structured output is not valid
│   ├── ToolError                a tool failed outside of a single call's result
│   ├── UsageLimitExceeded       a hard usage limit was hit with no graceful end
│   ├── LedgerError              a message ledger would break its invariants
│   ├── VMError                  an exception escaped a VM program (carries pc and node)
│   ├── SnapshotError            a snapshot cannot be restored (other program, bad data)
│   ├── StoreError               a checkpoint store failed or holds bad data
│   │   └── RunLeaseError        another process holds the run
│   │       └── SessionLeaseError  another process runs a turn of the session
│   └── ReplayDivergence         a replayed run left its cassette (carries a diff)
└── (signals, not errors)
    Suspend                      raised inside a node to suspend the VM
```

Exceptions never log or print; they carry what a caller needs to report them.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CompileError",
    "ConfigError",
    "ContextOverflowError",
    "EmptyStreamError",
    "LedgerError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelTimeoutError",
    "PonderError",
    "ReplayDivergence",
    "RunError",
    "RunLeaseError",
    "SessionLeaseError",
    "SnapshotError",
    "StoreError",
    "StructuredOutputError",
    "Suspend",
    "ToolError",
    "UsageLimitExceeded",
    "UserError",
    "VMError",
]


class PonderError(Exception):
    """Base class of every error ponder raises."""


class UserError(PonderError):
    """The programmer used ponder wrongly; the message says how to fix it."""


class ConfigError(UserError):
    """A configuration value is invalid."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


class CompileError(UserError):
    """A VM program is malformed."""


class RunError(PonderError):
    """A run failed."""


class ModelError(RunError):
    """The model provider failed."""

    def __init__(self, message: str, *, model_name: str | None = None) -> None:
        super().__init__(message)
        self.model_name = model_name


class ModelHTTPError(ModelError):
    """The provider answered with an HTTP error status."""

    def __init__(
        self,
        status_code: int,
        message: str,
        *,
        model_name: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"HTTP {status_code}: {message}", model_name=model_name)
        self.status_code = status_code
        self.body = body


class ContextOverflowError(ModelHTTPError):
    """The provider refused the prompt as longer than the model's context window.

    ``limit`` is the window in tokens and ``prompt_tokens`` what the prompt counted, each
    when the provider said (OpenAI, vLLM, llama.cpp and Anthropic do); ``None`` otherwise.
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        *,
        model_name: str | None = None,
        body: Any = None,
        limit: int | None = None,
        prompt_tokens: int | None = None,
    ) -> None:
        super().__init__(status_code, message, model_name=model_name, body=body)
        self.limit = limit
        self.prompt_tokens = prompt_tokens


class ModelTimeoutError(ModelError):
    """The request took longer than its total timeout."""


class ModelConnectionError(ModelError):
    """The provider could not be reached."""


class ModelResponseError(ModelError):
    """The provider's answer could not be used (malformed, empty, cut off)."""


class EmptyStreamError(ModelResponseError):
    """The provider opened a stream and ended it without a delta (a refusal after 200 OK)."""


class StructuredOutputError(ModelResponseError):
    """The model's structured output does not validate; the caller may retry."""

    def __init__(self, message: str, *, raw: str, model_name: str | None = None) -> None:
        super().__init__(message, model_name=model_name)
        self.raw = raw


class ToolError(RunError):
    """A tool failed in a way that is not one call's error result."""


class UsageLimitExceeded(RunError):
    """A hard usage limit was hit where no graceful end was possible."""


class LedgerError(RunError):
    """A message ledger would break its invariants (a call without exactly one result)."""


class VMError(RunError):
    """An exception escaped a VM program.

    The original exception is the ``__cause__``; ``pc`` and ``node`` say where it happened.
    """

    def __init__(self, message: str, *, pc: int, node: str | None) -> None:
        super().__init__(message)
        self.pc = pc
        self.node = node


class SnapshotError(RunError):
    """A snapshot cannot be restored: another program, another format, or bad data."""


class StoreError(RunError):
    """A checkpoint store failed or holds data it cannot read."""


class RunLeaseError(StoreError):
    """Another process holds the lease on this run."""

    def __init__(self, run_id: str, holder: str | None, detail: str | None = None) -> None:
        super().__init__(
            f"run {run_id!r}: {detail}"
            if detail
            else f"run {run_id!r} is being run by {holder or 'another process'}; "
            "wait for it to finish or suspend, or cancel it"
        )
        self.run_id = run_id
        self.holder = holder


class SessionLeaseError(RunLeaseError):
    """Another process runs a turn of this session (``holder``); ``run_id`` is empty.

    ``waited`` is how long the refused turn waited for it (None: it was not waiting).
    """

    def __init__(self, session_id: str, holder: str | None, waited: float | None = None) -> None:
        who = holder or "another process"
        if waited is None:
            text = f"session {session_id!r}: a turn of it is being run by {who}"
        else:
            text = (
                f"session {session_id!r}: a turn of it is still being run by {who} after "
                f"waiting {waited:g} s (Store.turn_wait_seconds); send the turn again later"
            )
        StoreError.__init__(self, text)
        self.run_id = ""
        self.holder = holder
        self.session_id = session_id
        self.waited = waited


class ReplayDivergence(RunError):
    """A replayed run did something its cassette did not record.

    ``what`` is ``request``, ``path``, ``tool``, ``end`` or ``output``; ``index`` is the
    position in the cassette where it happened; ``diff`` shows recorded against replayed.
    """

    def __init__(self, what: str, index: int, message: str, diff: str = "") -> None:
        super().__init__(message)
        self.what = what
        self.index = index
        self.diff = diff


class Suspend(BaseException):
    """Raised inside a VM node to suspend the program at this instruction.

    A ``BaseException`` so that a TRY block in the program never catches it.
    """

    def __init__(self, reason: str, payload: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.payload = payload
