"""Interpreter behaviour: suspend/resume, node-requested suspension, errors, hooks, step, dis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.exceptions import SnapshotError, Suspend, VMError
from ponder.vm import (
    BREAK,
    CALL,
    IF,
    RETURN,
    SUB,
    SUSPEND,
    TRY,
    WHILE,
    Finished,
    Interpreter,
    NodeContext,
    Opcode,
    RestoredException,
    Suspended,
    compile_program,
    node,
)
from tests.support.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden"


class State(BaseModel):
    count: int = 0
    trace: list[str] = []
    approved: bool = False
    fail_once: bool = True


@node
def init(ctx: NodeContext) -> None:
    ctx.state.trace.append(f"init@{ctx.pc}:{ctx.node_name}")


@node
async def step(ctx: NodeContext) -> None:
    ctx.state.count += 1
    ctx.state.trace.append(f"step{ctx.state.count}")


@node(name="more")
def more(ctx: NodeContext) -> bool:
    return bool(ctx.state.count < 10)


@node
def done(ctx: NodeContext) -> bool:
    return bool(ctx.state.count == 5)


@node
def finish(ctx: NodeContext) -> None:
    ctx.state.trace.append(f"finish:{ctx.resume_value}")


def approval(ctx: NodeContext) -> None:
    if ctx.resume_value is None:
        raise Suspend("approve", {"count": ctx.state.count})
    ctx.state.trace.append(f"approved:{ctx.resume_value}")


def flaky(ctx: NodeContext) -> None:
    ctx.state.trace.append("flaky")
    if ctx.state.fail_once:
        raise KeyError("missing")


def roundtrip(blob: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(blob))
    return loaded


async def test_the_readme_program_runs() -> None:
    program = compile_program(init >> WHILE(more).ACTION(step >> IF(done, BREAK)) >> finish)
    state = State()
    vm = Interpreter(program, state)
    assert await vm.run() == Finished(None)
    assert vm.is_finished and vm.state is state
    assert state.trace == ["init@0:init", *[f"step{i}" for i in range(1, 6)], "finish:None"]
    assert await vm.run() == Finished(None)  # a finished run stays finished


async def test_suspend_instruction_resumes_at_the_next_one_with_the_value() -> None:
    program = compile_program(init >> SUSPEND("ask", {"q": "name?"}) >> finish >> RETURN(7))
    vm = Interpreter(program, State())
    assert await vm.run() == Suspended("ask", {"q": "name?"})
    assert vm.status == "suspended"
    blob = roundtrip(vm.snapshot())
    vm2 = Interpreter.restore(program, blob, state_type=State)
    assert vm2.status == "suspended" and vm2.suspension == Suspended("ask", {"q": "name?"})
    assert await vm2.resume("Ada") == Finished(7)
    assert vm2.state.trace == ["init@0:init", "finish:Ada"]


async def test_a_node_requests_suspension_and_is_rerun_with_the_resume_value() -> None:
    program = compile_program(step >> TRY(node(approval, name="approval")).EXCEPT(Exception, init))
    vm = Interpreter(program, State())
    outcome = await vm.run()
    assert outcome == Suspended("approve", {"count": 1})  # TRY never catches Suspend
    pc = vm.pc
    assert vm.program.node_at(pc).name == "approval"  # type: ignore[union-attr]
    vm2 = Interpreter.restore(program, roundtrip(vm.snapshot()), state_type=State)
    assert await vm2.resume("yes") == Finished(None)
    assert vm2.state.trace == ["step1", "approved:yes"]  # step ran once only


async def test_uncaught_error_is_a_vm_error_and_the_failing_node_can_be_rerun() -> None:
    program = compile_program(step >> TRY(node(flaky, name="flaky")).FINALLY(init) >> finish)
    vm = Interpreter(program, State())
    with pytest.raises(VMError) as info:
        await vm.run()
    error = info.value
    assert isinstance(error.__cause__, KeyError)
    assert error.node == "flaky" and error.pc == 1
    assert "KeyError" in str(error) and "'flaky'" in str(error)
    assert vm.status == "failed"
    blob = roundtrip(vm.snapshot())
    assert blob["error"]["type"] == "builtins:KeyError"
    # After the FINALLY ran the exception is pending at the RERAISE; fix the cause and re-run.
    vm2 = Interpreter.restore(program, blob, state_type=State)
    assert vm2.program.opcodes[vm2.pc] is Opcode.RERAISE
    with pytest.raises(VMError):
        await vm2.run()


async def test_error_without_handlers_reruns_the_failing_node_after_restore() -> None:
    program = compile_program(step >> node(flaky, name="flaky") >> finish)
    vm = Interpreter(program, State())
    with pytest.raises(VMError):
        await vm.run()
    assert vm.pc == 1
    blob = roundtrip(vm.snapshot())
    blob["state"]["fail_once"] = False  # the operator fixes the cause
    vm2 = Interpreter.restore(program, blob, state_type=State)
    assert await vm2.run() == Finished(None)
    assert vm2.state.trace == ["step1", "flaky", "flaky", "finish:None"]
    vm.state.fail_once = False  # the same interpreter can also re-run in place
    assert await vm.run() == Finished(None)


async def test_hooks_run_around_each_node_sync_or_async() -> None:
    seen: list[str] = []

    def before(vm: Interpreter, pc: int) -> None:
        seen.append(f"before {pc}")

    async def after(vm: Interpreter, pc: int) -> None:
        seen.append(f"after {pc}")

    program = compile_program(init >> IF(done, BREAK_FREE) >> RETURN(lambda ctx: 3))
    vm = Interpreter(program, State(), before=before, after=after)
    assert await vm.run() == Finished(3)
    assert seen == ["before 0", "after 0", "before 1", "after 1", "before 3", "after 3"]


BREAK_FREE = node(lambda ctx: None, name="nothing")


async def test_a_before_hook_may_suspend_before_a_node_and_after_hook_after_it() -> None:
    asked: list[int] = []

    def before(vm: Interpreter, pc: int) -> None:
        if vm.program.node_at(pc) is finish and not asked:
            asked.append(pc)
            raise Suspend("checkpoint")

    def after(vm: Interpreter, pc: int) -> None:
        if vm.program.node_at(pc) is init and vm.state.count == 0:
            vm.state.count = 1
            raise Suspend("after-init")

    program = compile_program(init >> finish)
    vm = Interpreter(program, State(), before=before, after=after)
    assert await vm.run() == Suspended("after-init")
    assert vm.pc == 1  # init completed
    assert await vm.resume() == Suspended("checkpoint")
    assert await vm.resume("go") == Finished(None)
    assert vm.state.trace == ["init@0:init", "finish:go"]


async def test_step_executes_one_instruction_at_a_time() -> None:
    program = compile_program(init >> WHILE(more).ACTION(step >> IF(done, BREAK)) >> RETURN(1))
    vm = Interpreter(program, State())
    pcs = []
    while (outcome := await vm.step()) is None:
        pcs.append(vm.pc)
    assert outcome == Finished(1)
    assert len(pcs) > 10 and vm.state.count == 5


async def test_deps_and_interpreter_are_visible_to_nodes() -> None:
    def use(ctx: NodeContext) -> None:
        assert ctx.interpreter.program is program
        ctx.state.trace.append(ctx.deps["greeting"])

    program = compile_program(node(use, name="use"))
    vm = Interpreter(program, State(), deps={"greeting": "hi"})
    await vm.run()
    assert vm.state.trace == ["hi"]
    assert "greeting" not in json.dumps(vm.snapshot())


async def test_runaway_recursion_is_an_exception_the_program_can_catch() -> None:
    rec = SUB("rec", CALL("rec"))
    program = compile_program(TRY(CALL(rec)).EXCEPT(RecursionError, init) >> RETURN(2))
    vm = Interpreter(program, State())
    assert await vm.run() == Finished(2)
    assert len(vm.frames) == 1


def test_dis_shows_offsets_opcodes_names_targets_and_the_exception_table() -> None:
    program = compile_program(
        init
        >> WHILE(more).ACTION(step >> TRY(IF(done, BREAK)).FINALLY(finish))
        >> CALL(SUB("s", init))
    )
    assert_golden(program.dis() + "\n", GOLDEN / "dis.txt")
    for ins in program.instructions:
        assert ins.opcode in Opcode


def test_fingerprint_is_stable_and_tells_programs_apart() -> None:
    def build() -> Any:
        return init >> WHILE(more).ACTION(step >> IF(done, BREAK)) >> finish

    first, second = compile_program(build()), compile_program(build())
    assert first.fingerprint == second.fingerprint
    other = compile_program(init >> WHILE(more).ACTION(step) >> finish)
    renamed = compile_program(
        node(init.fn, name="start") >> WHILE(more).ACTION(step >> IF(done, BREAK)) >> finish
    )
    assert len({first.fingerprint, other.fingerprint, renamed.fingerprint}) == 3


async def test_restore_refuses_a_snapshot_of_another_program() -> None:
    program = compile_program(init >> SUSPEND("wait") >> finish)
    vm = Interpreter(program, State())
    await vm.run()
    other = compile_program(init >> SUSPEND("wait") >> step)
    with pytest.raises(SnapshotError, match=r"taken from program .* not from this program"):
        Interpreter.restore(other, vm.snapshot(), state_type=State)


async def test_restore_rejects_malformed_snapshots() -> None:
    program = compile_program(init >> SUSPEND("wait") >> finish)
    vm = Interpreter(program, State())
    await vm.run()
    good = roundtrip(vm.snapshot())
    broken: list[tuple[Any, str]] = [
        ("not a dict", "a snapshot is a dict"),
        ({**good, "format": "v0"}, "unknown snapshot format"),
        ({**good, "pc": 999}, "pc 999 is outside the program"),
        ({**good, "pc": -1}, "malformed snapshot"),
        ({**good, "status": "dancing"}, "malformed snapshot"),
        ({**good, "frames": []}, "no frames"),
        ({**good, "frames": [*good["frames"], {"return_pc": 500}]}, "return pc 500"),
        ({**good, "state": {"count": "many"}}, "does not validate as State"),
        ({**good, "extra": 1}, "malformed snapshot"),
    ]
    for blob, message in broken:
        with pytest.raises(SnapshotError, match=message):
            Interpreter.restore(program, blob, state_type=State)
    restored = Interpreter.restore(program, good)  # the state type is found by its import path
    assert isinstance(restored.state, State)
    with pytest.raises(SnapshotError, match="cannot import the state type"):
        Interpreter.restore(program, {**good, "state_type": "nowhere:Nothing"})


async def test_snapshot_refuses_what_it_cannot_save() -> None:
    program = compile_program(init)
    with pytest.raises(SnapshotError, match="not a pydantic model"):
        Interpreter(program, {"count": 1}).snapshot()

    def ask(ctx: NodeContext) -> None:
        raise Suspend("ask", object())

    vm = Interpreter(compile_program(node(ask, name="ask")), State())
    await vm.run()
    with pytest.raises(SnapshotError, match="the suspension payload"):
        vm.snapshot()


async def test_handled_exception_survives_a_snapshot_inside_a_handler() -> None:
    def boom(ctx: NodeContext) -> None:
        raise ValueError("bad", 3)

    def show(ctx: NodeContext) -> None:
        ctx.state.trace.append(f"{type(ctx.exception).__name__}{ctx.exception.args}")  # type: ignore[union-attr]

    program = compile_program(
        TRY(node(boom, name="boom"))
        .EXCEPT(
            ValueError, SUSPEND("inside") >> node(show, name="show") >> node(reraise, name="re")
        )
        .FINALLY(init)
    )
    vm = Interpreter(program, State())
    assert await vm.run() == Suspended("inside")
    vm2 = Interpreter.restore(program, roundtrip(vm.snapshot()), state_type=State)
    with pytest.raises(VMError) as info:
        await vm2.resume()
    assert isinstance(info.value.__cause__, ValueError) and info.value.node == "re"
    assert vm2.state.trace == ["ValueError('bad', 3)", "init@11:init"]


async def test_an_exception_type_that_cannot_be_imported_comes_back_as_restored_exception() -> None:
    class Local(Exception):
        pass

    def boom(ctx: NodeContext) -> None:
        raise Local("odd")

    def show(ctx: NodeContext) -> None:
        exc = ctx.exception
        assert isinstance(exc, RestoredException)
        ctx.state.trace.append(f"{exc.type_name.rpartition('.')[2]}|{exc}")

    program = compile_program(
        TRY(node(boom, name="boom")).EXCEPT(Local, SUSPEND("inside") >> node(show, name="show"))
    )
    vm = Interpreter(program, State())
    await vm.run()
    vm2 = Interpreter.restore(program, roundtrip(vm.snapshot()), state_type=State)
    assert await vm2.resume() == Finished(None)
    assert vm2.state.trace == [f"Local|{__name__}:{Local.__qualname__}: odd"]


def reraise(ctx: NodeContext) -> None:
    assert ctx.exception is not None
    raise ctx.exception
