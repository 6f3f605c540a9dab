"""The secret shapes `redact` masks, and ordinary text it leaves alone."""

from __future__ import annotations

import pytest

from ponder.tools.redact import redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("mysql://root:pa55@localhost:3306/app", "pa55"),
        ("host=db user=app password=pa55 dbname=x", "pa55"),
        ("DB_PASSWORD: 'pa55'", "pa55"),
        ("api_key=abc123xyz&user=1", "abc123xyz"),
        ("Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
        ("using sk-ant-api03-abcdefghijklmnopqrst", "sk-ant-api03-abcdefghijklmnopqrst"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ],
)
def test_secret_shapes_are_masked(text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked and "[redacted]" in masked


@pytest.mark.parametrize(
    "text",
    [
        "KeyError: 'name'",
        "file not found: /tmp/report.txt",
        "https://example.com/path?q=1",
        "division by zero",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text
