"""`make demo` runs the VM demonstration end to end."""

from __future__ import annotations

import pytest

from ponder import demo


def test_demo_suspends_restores_and_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "exception table:" in out
    assert "first run: Suspended(reason='approval'" in out
    assert "resumed in a new interpreter: Finished(value='step 5'" in out
    assert "approved: yes | tidy | step 4 | step 5" in out
