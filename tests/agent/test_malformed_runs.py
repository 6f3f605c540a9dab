"""A fixed-seed fuzz: 100 malformed provider responses, each met by a real run over the wire."""

from __future__ import annotations

from pathlib import Path

from tests.support.fuzz import fuzz_runs


async def test_malformed_responses_end_every_run_cleanly(tmp_path: Path) -> None:
    tallies = await fuzz_runs(20261201, 100, tmp_path)
    assert sum(t.runs for t in tallies) == 100
    assert [f for t in tallies for f in t.failures] == []
    for tally in tallies:  # every lane saw runs that went on and runs that ended typed
        assert tally.completed > 0 and sum(tally.typed_errors.values()) > 0, tally
