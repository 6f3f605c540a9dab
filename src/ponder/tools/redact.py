"""Redacting secrets from text that leaves a tool.

Exception messages reach the model, the store and the events, so passwords, tokens and
API keys in them are masked first.

The shapes: URLs with a password (``scheme://user:secret@host``), ``key=value`` /
``key: value`` pairs whose key names a secret (password, token, api_key, secret, ...),
bearer tokens, and API keys with well-known prefixes (OpenAI, Anthropic, GitHub, GitLab,
Slack, AWS, Google).
"""

from __future__ import annotations

import re

__all__ = ["MASK", "describe", "redact"]

MASK = "[redacted]"

_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*:)[^\s@/]+(@)")
_SECRET_PAIR = re.compile(
    r"(?i)\b((?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|auth|credentials?|key))(\s*[=:]\s*)(['\"]?)"
    r"(?!\[redacted\])[^\s'\"&,;]+"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_KNOWN_KEYS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})"
)


def redact(text: str) -> str:
    """``text`` with every secret of a known shape replaced by ``[redacted]``."""
    text = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<2>", text)
    text = _BEARER.sub(rf"\g<1> {MASK}", text)
    text = _KNOWN_KEYS.sub(MASK, text)
    return _SECRET_PAIR.sub(rf"\g<1>\g<2>\g<3>{MASK}", text)


def describe(exc: BaseException) -> str:
    """``exc`` as ``Type: message``, its message redacted (the type alone if it has none)."""
    text = redact(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
