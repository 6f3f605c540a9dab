"""Suspend at every instruction boundary, go through JSON text, resume elsewhere: same run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ponder.vm import RETURN, Finished, Interpreter, Outcome, compile_program
from ponder.vm.state import SnapshotRecord
from tests.vm.workflow import FlowState, build, describe, run_to_end

ROOT = Path(__file__).resolve().parents[2]


async def reference() -> tuple[list[Any], list[str], int]:
    program = build()
    vm = Interpreter(program, FlowState())
    outcomes = describe(await run_to_end(vm))
    stepper, steps = Interpreter(program, FlowState()), 0
    while not isinstance(await stepper.step(), Finished):
        steps += 1
    assert stepper.state.trace == vm.state.trace
    return outcomes, vm.state.trace, steps + 1


async def run_interrupted(boundary: int) -> tuple[list[Any], list[str], str]:
    """Step ``boundary`` instructions, snapshot to JSON text, finish in a new interpreter."""
    program = build()
    vm = Interpreter(program, FlowState())
    seen: list[Outcome] = []
    for _ in range(boundary):
        if (outcome := await vm.step()) is not None:
            seen.append(outcome)
    snapshot = vm.snapshot()
    # the snapshot is built by hand: it must be exactly its schema's JSON dump
    assert SnapshotRecord.model_validate(snapshot).model_dump(mode="json") == snapshot
    text = json.dumps(snapshot)
    restored = Interpreter.restore(build(), json.loads(text), state_type=FlowState)
    if not restored.is_finished:
        seen += await run_to_end(restored)
    return describe(seen), restored.state.trace, text


async def test_the_workflow_is_non_trivial() -> None:
    outcomes, trace, steps = await reference()
    assert steps > 80
    kinds = [o[:2] for o in outcomes]
    handled = ["suspended", "handled"]
    assert kinds == [["suspended", "approve"], handled, handled, handled, ["finished", None]]
    assert any(t.startswith("seen Boom") for t in trace)
    assert any(t.startswith("score-finally") for t in trace) and any("scored" in t for t in trace)
    assert outcomes[-1][2] == {"i": 4, "total": 4}


async def test_suspend_at_every_instruction_boundary_gives_the_same_run() -> None:
    outcomes, trace, steps = await reference()
    statuses = set()
    for boundary in range(steps + 1):
        got_outcomes, got_trace, text = await run_interrupted(boundary)
        assert got_trace == trace, f"boundary {boundary}"
        assert got_outcomes == outcomes, f"boundary {boundary}"
        blob = json.loads(text)
        statuses.add(blob["status"])
        if any(frame["handled"] for frame in blob["frames"]):
            statuses.add("inside-handler")
        if len(blob["frames"]) > 1:
            statuses.add("inside-sub")
    assert statuses >= {"ready", "suspended", "finished", "inside-handler", "inside-sub"}


async def test_a_snapshot_holds_json_data_for_values_of_other_shapes() -> None:
    vm = Interpreter(compile_program(RETURN(lambda ctx: (1, [("a", 2)]))), FlowState())
    await vm.run()
    snapshot = vm.snapshot()
    assert snapshot["result"] == [1, [["a", 2]]]  # tuples as JSON arrays, as pydantic dumps them
    assert SnapshotRecord.model_validate(snapshot).model_dump(mode="json") == snapshot


def resume_in_new_process(text: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", "from tests.vm.workflow import main; main()"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


async def test_restore_in_a_fresh_process() -> None:
    _, trace, steps = await reference()
    # one boundary inside an EXCEPT handler (a handled exception in the snapshot), one mid-way
    program = build()
    vm = Interpreter(program, FlowState())
    inside_handler = None
    for boundary in range(steps):
        if vm.frames[-1].handled and inside_handler is None:
            inside_handler = boundary
        await vm.step()
    assert inside_handler is not None
    for boundary in (inside_handler, steps // 2):
        _, _, text = await run_interrupted(boundary)
        before = len(json.loads(text)["state"]["trace"])
        done = resume_in_new_process(text)
        assert done["trace"] == trace
        expected_outcomes, _, _ = await run_interrupted(boundary)
        assert (
            done["outcomes"] == expected_outcomes[len(expected_outcomes) - len(done["outcomes"]) :]
        )
        assert before < len(trace)


async def test_suspended_run_resumes_with_a_value_in_a_fresh_process() -> None:
    vm = Interpreter(build(), FlowState())
    assert (await vm.run()).kind == "suspended"  # the approval node asked
    done = resume_in_new_process(json.dumps(vm.snapshot()))
    assert done["trace"][1] == "approved None"
    assert done["outcomes"][-1][0] == "finished"
