"""``Idempotency-Key``: a retried chat completion returns the first request's run."""

from __future__ import annotations

from collections import OrderedDict

from fastapi import Request

__all__ = ["IdempotencyKeys", "keys_of"]

_KEYS_KEPT = 10_000


class IdempotencyKeys:
    """The run each ``Idempotency-Key`` started (the newest keys are kept)."""

    def __init__(self, size: int = _KEYS_KEPT) -> None:
        self.size = size
        self._runs: OrderedDict[str, tuple[str, int]] = OrderedDict()

    def get(self, key: str | None) -> tuple[str, int] | None:
        """The run id and first event seq of the request made with ``key``."""
        return None if key is None else self._runs.get(key)

    def put(self, key: str | None, run_id: str, seq: int) -> None:
        """Remember the run ``key`` started."""
        if key is None:
            return
        self._runs[key] = (run_id, seq)
        while len(self._runs) > self.size:
            self._runs.popitem(last=False)


def keys_of(request: Request) -> IdempotencyKeys:
    """The app's keys (made on first use)."""
    state = request.app.state
    if not hasattr(state, "idempotency_keys"):
        state.idempotency_keys = IdempotencyKeys()
    found: IdempotencyKeys = state.idempotency_keys
    return found
