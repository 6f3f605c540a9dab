"""Anthropic's prompt cache, as the fake Messages API keeps it.

A request's prefix is cached at each block marked ``cache_control`` (tools, then system,
then messages, in that order); a later request reads from the cache the longest of its
own prefixes, ending at a block boundary, that an earlier request cached, byte for byte.
A request without a breakpoint neither reads nor writes. Tokens are counted as the fake
counts them: a quarter of the prefix's JSON length.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["PromptCache"]


def _blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as (block JSON without its mark, marked) in cache order."""
    blocks: list[dict[str, Any]] = [*body.get("tools", ())]
    system = body.get("system")
    if isinstance(system, str):
        blocks.append({"type": "text", "text": system})
    elif isinstance(system, list):
        blocks += system
    for turn in body.get("messages", ()):
        content = turn.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks += [{"role": turn.get("role"), **block} for block in content or ()]
    out: list[tuple[str, bool]] = []
    for block in blocks:
        bare = {k: v for k, v in block.items() if k != "cache_control"}
        out.append((json.dumps(bare, sort_keys=True), "cache_control" in block))
    return out


class PromptCache:
    """The prefixes cached so far, and what one request reads from them."""

    def __init__(self) -> None:
        self._stored: set[str] = set()
        self._last: tuple[int, int] | None = None

    def read(self, body: dict[str, Any]) -> int:
        """Tokens of ``body`` read from the cache; caches its marked prefixes."""
        if self._last is not None and self._last[0] == id(body):
            return self._last[1]
        blocks = _blocks(body)
        prefix, prefixes, marked = "", [], []
        for text, mark in blocks:
            prefix += text + "\n"
            prefixes.append(prefix)
            if mark:
                marked.append(prefix)
        read = 0
        if marked:
            read = max((len(p) // 4 for p in prefixes if p in self._stored), default=0)
            self._stored.update(marked)
        self._last = (id(body), read)
        return read
