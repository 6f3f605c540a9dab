"""What model requests cost, from the maintained price table of ``genai-prices``.

`request_cost` prices one response's usage for a model string (``openai:gpt-4o-mini``)
in US dollars; it is ``None`` for a model the table does not know (a local server, a
scripted model, a name it has no price for) or without ``genai-prices`` installed
(``pip install 'ponder[cost]'``), and then runs, the CLI and the server show tokens
only. A model found unknown once is not looked up again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ponder.models.base import ModelResponse, Usage

__all__ = ["PRICED_PROVIDERS", "add_cost", "request_cost", "response_cost", "sum_cost"]

PRICED_PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "deepseek": "deepseek",
    "openrouter": "openrouter",
}
"""ponder's provider prefixes that bill per token, and their ``genai-prices`` provider ids."""
_unknown: set[str] = set()


def request_cost(model: str, usage: Usage, at: float | None = None) -> float | None:
    """The price in USD of ``usage`` on ``model`` (at time ``at``), or None when not known.

    ``at`` (seconds since the epoch) picks the prices in force then; a durable engine
    passes its deterministic clock.
    """
    prefix, _, name = model.partition(":")
    provider = PRICED_PROVIDERS.get(prefix)
    if provider is None or not name or model in _unknown:
        return None
    try:
        from genai_prices import Usage as PriceUsage
        from genai_prices import calc_price
    except Exception:  # not installed, or not importable here (a Temporal workflow's sandbox)
        _unknown.add(model)
        return None
    priced = PriceUsage(
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cached_input_tokens,  # priced at the cached rate
        output_tokens=usage.output_tokens,
    )
    when = datetime.fromtimestamp(at, UTC) if at is not None else None
    try:
        price = calc_price(
            priced, model_ref=name, provider_id=provider, genai_request_timestamp=when
        )
    except Exception:  # unknown to the table (LookupError), or it cannot be used here
        _unknown.add(model)
        return None
    return float(price.total_price)


def response_cost(model: Any, response: ModelResponse, at: float | None = None) -> float | None:
    """The price of ``response`` from ``model``: the model's own ``price`` if it has one.

    A model that runs elsewhere (a Temporal activity) priced the response there and
    reports that price; any other is priced from its name and the response's usage.
    """
    price = getattr(model, "price", None)
    if callable(price):
        known: float | None = price(response)
        return known
    return request_cost(model.name, response.usage, at)


def add_cost(
    total: float | None, model: str, usage: Usage, at: float | None = None
) -> float | None:
    """``total`` plus the cost of ``usage``; None while no request of the run was priced."""
    return sum_cost(total, request_cost(model, usage, at))


def sum_cost(total: float | None, cost: float | None) -> float | None:
    """``total`` plus ``cost``; ``total`` itself (the same object) when ``cost`` is None."""
    if cost is None:
        return total
    return cost if total is None else total + cost
