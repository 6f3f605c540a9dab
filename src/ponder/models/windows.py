"""Asking a local server for its context window before the first request.

Local servers run with a window the operator chose (``--n_ctx``, ``--max-model-len``), and
say so only on their own endpoints: llama.cpp's ``GET /props``
(``default_generation_settings.n_ctx``), vLLM's ``GET /v1/models`` (``max_model_len``), LM
Studio's ``GET /api/v0/models/{model}`` (``loaded_context_length``). `probe_window` asks the
one its profile names, once per server and model in a process, and records what it learns
with `learn_window`, so a run compacts before its first overflow. The probe is best effort:
a server that does not answer, answers something else, or is slow (two seconds) teaches
nothing, and a refused prompt still teaches the window (see ``ponder.agent.strategies``).
Ollama is not asked: its OpenAI endpoint truncates silently to ``num_ctx``, which no
endpoint reports per request.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

from ponder.models.capabilities import learn_window, learned_window

__all__ = ["PROBED_PROFILES", "forget_probes", "http_json", "probe_window", "window_from"]

Get = Callable[[str], Awaitable[Any]]
"""Fetches a URL's JSON body (raises on any failure)."""

PROBED_PROFILES = frozenset({"llamacpp", "vllm", "lmstudio"})
"""The provider profiles whose servers are asked for their window."""

_asked: set[tuple[str, str | None, str]] = set()
_lock = threading.Lock()


async def probe_window(
    profile: str, base_url: str | None, model: str, model_name: str, get: Get
) -> int | None:
    """The window ``profile``'s server at ``base_url`` states for ``model``, learned once.

    Asked at most once per (profile, base URL, model) in a process; None if not asked now
    or not stated.
    """
    key = (profile, base_url, model)
    with _lock:
        if profile not in PROBED_PROFILES or base_url is None or key in _asked:
            return None
        _asked.add(key)
    if learned_window(model_name):
        return None
    root = base_url.rstrip("/").removesuffix("/v1")
    url = {
        "llamacpp": f"{root}/props",
        "vllm": f"{base_url.rstrip('/')}/models",
        "lmstudio": f"{root}/api/v0/models/{model}",
    }[profile]
    try:
        body = await get(url)
    except Exception:  # best effort: any failure (status, transport, JSON) teaches nothing
        return None
    window = window_from(profile, model, body)
    if window is not None:
        learn_window(model_name, window)
    return window


def window_from(profile: str, model: str, body: Any) -> int | None:
    """The window in a server's answer, in that profile's shape; None if it has none."""
    if profile == "llamacpp" and isinstance(body, dict):
        settings = body.get("default_generation_settings")
        found = settings.get("n_ctx") if isinstance(settings, dict) else body.get("n_ctx")
        return _tokens(found)
    if profile == "vllm" and isinstance(body, dict) and isinstance(body.get("data"), list):
        for entry in body["data"]:
            if isinstance(entry, dict) and entry.get("id") == model:
                return _tokens(entry.get("max_model_len"))
        return None
    if profile == "lmstudio" and isinstance(body, dict):
        return _tokens(body.get("loaded_context_length"))
    return None


def http_json(api_key: str | None) -> Get:
    """A `Get` over plain HTTP with the provider's key, giving up after two seconds."""

    async def get(url: str) -> Any:
        import httpx2  # the SDKs' transport: loaded with them

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        async with httpx2.AsyncClient(timeout=2.0) as http:
            answer = await http.get(url, headers=headers)
            answer.raise_for_status()
            return answer.json()

    return get


def _tokens(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def forget_probes() -> None:
    """Ask again next time (for tests; `ponder.models.capabilities.forget_learned` too)."""
    with _lock:
        _asked.clear()
