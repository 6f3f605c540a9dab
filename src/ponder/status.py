"""The closed sets of a run's life, each defined once: statuses, stop and suspension reasons.

A leaf module: the run core, the store, the server, Temporal and the CLI all name these
values through it, so a status spelled differently in one place is a type error.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "CALL_STATUSES",
    "LIMIT_STOP_REASONS",
    "RUN_STATUSES",
    "STOP_REASONS",
    "SUSPENSION_REASONS",
    "CallStatus",
    "LoopLimit",
    "RunStatus",
    "StopReason",
    "SuspensionReason",
]

RunStatus = Literal["running", "completed", "suspended", "failed", "cancelled", "interrupted"]
"""Where a run stands; ``interrupted`` is a cancelled run that can be resumed."""
RUN_STATUSES: Final[tuple[RunStatus, ...]] = get_args(RunStatus)

CallStatus = Literal["ok", "error", "timeout", "invalid_arguments", "unknown_tool", "cancelled"]
"""How one tool call ended."""
CALL_STATUSES: Final[tuple[CallStatus, ...]] = get_args(CallStatus)

LoopLimit = Literal[
    "rounds", "tool_calls", "requests", "input_tokens", "output_tokens", "total_tokens"
]
"""A limit that ends a run's tool loop (the agent's round and call limits, `UsageLimits`)."""

StopReason = Literal[
    "answered",
    "answered_without_stop",
    "loop",
    "stalled",
    "empty_answer",
    "content_filter",
    "invalid_output",
    "reported",
    "round_limit",
    "call_limit",
    "requests_limit",
    "input_tokens_limit",
    "output_tokens_limit",
    "total_tokens_limit",
    "context_overflow",
]
"""Why a completed run stopped (``run_finished``'s ``stop_reason``)."""
STOP_REASONS: Final[frozenset[StopReason]] = frozenset(get_args(StopReason))

LIMIT_STOP_REASONS: Final[dict[LoopLimit, StopReason]] = {
    "rounds": "round_limit",
    "tool_calls": "call_limit",
    "requests": "requests_limit",
    "input_tokens": "input_tokens_limit",
    "output_tokens": "output_tokens_limit",
    "total_tokens": "total_tokens_limit",
}
"""The stop reason of a run whose tool loop a limit ended."""

SuspensionReason = Literal["approval", "elicitation"]
"""Why an agent run waits: tool calls to approve, or MCP servers' questions to answer."""
SUSPENSION_REASONS: Final[frozenset[SuspensionReason]] = frozenset(get_args(SuspensionReason))
