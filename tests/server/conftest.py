"""Fixtures of the ``ponder serve`` subprocess tests (`serve_process`): the stepping fake
provider, and a `Serve` on a SQLite file or the PostgreSQL database (one per backend)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ponder.testing import FakeOpenAIServer

from .serve_process import Serve, stepper, store_url


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    """The fake provider playing `stepper`: ``STEPS`` step calls per run, then an answer."""
    with FakeOpenAIServer(stepper) as server:
        yield server


@pytest.fixture(params=["sqlite", "postgres"])
def serve(
    request: pytest.FixtureRequest, provider: FakeOpenAIServer, tmp_path: Path
) -> Iterator[Serve]:
    """A `Serve` (not started) on each backend; killed at the end if a test left it running."""
    serve = Serve(store_url(request.param, tmp_path), provider.base_url, tmp_path)
    yield serve
    serve.close()
