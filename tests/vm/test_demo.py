import subprocess
import sys


def test_the_vm_demo_suspends_snapshots_and_resumes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ponder.vm.demo"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "BRANCH_TRUE" in out and "exception table:" in out
    assert "first run: Suspended(reason='approval'" in out
    assert "resumed in a new interpreter: Finished(value='step 5'" in out
    assert "approved: yes | tidy | step 4 | step 5" in out
