"""Prefix stability: how much of each model request repeats the previous request's prefix.

Provider prompt caches (OpenAI, Anthropic, DeepSeek, llama.cpp's slot cache) reuse the
longest prefix a request shares with an earlier one, so a runtime that only appends to the
conversation keeps them hitting. A prompt is read as the pieces a provider renders in
order — the tool definitions, then each message — and a piece counts only if it and every
piece before it are unchanged. Use `prefix_shares` on the request bodies a fake server
recorded (``FakeOpenAIServer.requests``) or `request_shares` on `ScriptedModel.requests`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from ponder.models.base import ModelRequest

__all__ = ["body_segments", "prefix_shares", "request_segments", "request_shares", "shares"]


def body_segments(body: dict[str, Any]) -> list[str]:
    """An OpenAI-style request body as its rendered pieces: tools, then each message."""
    tools = json.dumps(body.get("tools") or [], sort_keys=True, ensure_ascii=False)
    messages = body.get("messages") or []
    return [tools, *(json.dumps(m, sort_keys=True, ensure_ascii=False) for m in messages)]


def request_segments(request: ModelRequest) -> list[str]:
    """A `ModelRequest` as its rendered pieces: tools, then each message."""
    tools = json.dumps([t.model_dump(mode="json") for t in request.tools], sort_keys=True)
    return [tools, *(m.model_dump_json() for m in request.messages)]


def shares(prompts: Sequence[Sequence[str]]) -> list[float]:
    """For each prompt after the first, the share of it the previous prompt can cache.

    That is the characters in its leading pieces that equal the previous prompt's, over all
    its characters (1.0: the previous prompt is a prefix and nothing was added).
    """
    result: list[float] = []
    for previous, current in itertools.pairwise(prompts):
        total = sum(len(piece) for piece in current)
        common = 0
        for old, new in zip(previous, current, strict=False):
            if old != new:
                break
            common += len(new)
        result.append(common / total if total else 1.0)
    return result


def prefix_shares(bodies: Sequence[dict[str, Any]]) -> list[float]:
    """`shares` of recorded request bodies."""
    return shares([body_segments(body) for body in bodies])


def request_shares(requests: Sequence[ModelRequest]) -> list[float]:
    """`shares` of recorded `ModelRequest` objects."""
    return shares([request_segments(request) for request in requests])
