"""`UsageLimits`: per-run bounds on requests, tokens and tool calls, ending in an answer.

The limits are checked before each request of the tool loop. Past one, the loop ends the
way ponder's other limits end it: a `LimitReached` event, then the answer asked for from
the results gathered so far, with stop reason ``<limit>_limit`` (``requests_limit``,
``total_tokens_limit`` ...). The request limit keeps one request for that answer; tokens
are counted as the provider reports them, so the answer's own request comes on top.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ponder.exceptions import UserError
from ponder.models.base import Usage

__all__ = ["UsageLimit", "UsageLimits"]

UsageLimit = Literal["requests", "input_tokens", "output_tokens", "total_tokens", "tool_calls"]


class UsageLimits(BaseModel):
    """What one run may use at most (``None``: no bound)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests: int | None = Field(default=None, ge=1)
    """Model requests, the final answer's included."""
    input_tokens: int | None = Field(default=None, ge=1)
    output_tokens: int | None = Field(default=None, ge=1)
    total_tokens: int | None = Field(default=None, ge=1)
    tool_calls: int | None = Field(default=None, ge=0)
    """Action tool calls executed (the built-in control tools are not counted)."""

    def __init__(self, **limits: Any) -> None:
        try:
            super().__init__(**limits)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(map(str, error["loc"]))
            raise UserError(f"UsageLimits {field}={error.get('input')!r}: {error['msg']}") from None

    @classmethod
    def of(cls, limits: Any) -> UsageLimits | None:
        """``limits`` checked to be `UsageLimits` (or None); `UserError` naming ``limits``."""
        if limits is None or isinstance(limits, UsageLimits):
            return limits
        raise UserError(f"limits must be UsageLimits(requests=..., ...), got {limits!r}")

    def reached(self, usage: Usage, tool_calls: int) -> tuple[UsageLimit, int] | None:
        """The first limit that ``usage`` and ``tool_calls`` have reached, with its value."""
        if self.requests is not None and usage.requests >= self.requests - 1:
            return "requests", self.requests
        for name, used in (
            ("input_tokens", usage.input_tokens),
            ("output_tokens", usage.output_tokens),
            ("total_tokens", usage.total_tokens),
        ):
            bound = getattr(self, name)
            if bound is not None and used >= bound:
                return name, bound  # type: ignore[return-value]
        if self.tool_calls is not None and tool_calls >= self.tool_calls:
            return "tool_calls", self.tool_calls
        return None
