"""The interpreter: an async dispatch loop over a flat program with an integer pc.

Sync nodes are called inline and async nodes awaited directly (no task per node). The
whole run state is plain data (see ``ponder.vm.state``), so ``snapshot()`` can be taken
at any instruction boundary and ``Interpreter.restore`` continues it in another process.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from ponder.exceptions import Suspend, UserError, VMError
from ponder.vm.ops import NODE_OPCODES, Opcode
from ponder.vm.program import Program
from ponder.vm.snapshot import restore_snapshot, take_snapshot
from ponder.vm.state import Finished, Frame, Handled, Outcome, Status, Suspended

__all__ = ["Finished", "Hook", "Interpreter", "NodeContext", "Outcome", "Suspended"]

MAX_FRAMES = 1000
Hook = Callable[["Interpreter", int], "Awaitable[None] | None"]


class _Halt(BaseException):
    """Internal: leave the dispatch loop with an outcome."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome


class _Reraise(BaseException):
    """Internal: RERAISE sends the handled exception on to the next handler."""

    def __init__(self, handled: Handled) -> None:
        self.handled = handled


_TRANSFERRED = (_Halt, _Reraise, Suspend, Exception)
"""What leaves an instruction to `Interpreter._transfer` (other BaseExceptions escape)."""

_OpHandler = Callable[["Interpreter", int, Any, int], int]
S = TypeVar("S")
D = TypeVar("D")


class NodeContext(Generic[S, D]):
    """What a node receives: the state, the dependencies and where it runs.

    Generic in the state and deps types, so a node can declare what it is given
    (``ctx: NodeContext[MyState, MyDeps]``); the interpreter passes them as they are.
    """

    __slots__ = ("deps", "interpreter", "resume_value", "state")

    def __init__(self, state: S, deps: D, interpreter: Interpreter) -> None:
        self.state = state
        self.deps = deps
        self.interpreter = interpreter
        self.resume_value: Any = None

    @property
    def pc(self) -> int:
        """The offset of the running instruction."""
        return self.interpreter.pc

    @property
    def node_name(self) -> str | None:
        """The name of the running node."""
        found = self.interpreter.program.node_at(self.interpreter.pc)
        return None if found is None else found.name

    @property
    def value(self) -> Any:
        """The current value: what the last node (or sub-program call) returned."""
        return self.interpreter.value

    @property
    def exception(self) -> BaseException | None:
        """The exception being handled (inside EXCEPT or FINALLY), else None."""
        for frame in reversed(self.interpreter.frames):
            if frame.handled:
                return frame.handled[-1].exception
        return None


class Interpreter:
    """Runs a :class:`Program` over a mutable pydantic ``state``.

    ``deps`` is handed to nodes and never snapshotted; ``before``/``after`` hooks run
    around each node call and cost nothing when unset.
    """

    def __init__(
        self,
        program: Program,
        state: Any,
        deps: Any = None,
        before: Hook | None = None,
        after: Hook | None = None,
    ) -> None:
        if not isinstance(program, Program):
            raise UserError(f"Interpreter: expected a compiled Program, got {program!r}")
        self.program = program
        self.state = state
        self.deps = deps
        self.before = before
        self.after = after
        self.pc = 0
        self.frames: list[Frame] = [Frame(-1)]
        self.value: Any = None
        self.status: Status = "ready"
        self.suspension: Suspended | None = None
        self.result: Finished | None = None
        self.error: Handled | None = None
        self.ctx: NodeContext[Any, Any] = NodeContext(state, deps, self)

    def close(self) -> None:
        """Drop the interpreter's reference cycle (with its node context) so it is freed at once.

        Without this the cycle collector has to find it. The interpreter cannot run
        afterwards; snapshots taken before stay valid.
        """
        del self.ctx

    @property
    def is_finished(self) -> bool:
        """True once the program has returned."""
        return self.status == "finished"

    # -- public driving -----------------------------------------------------------
    async def run(self) -> Outcome:  # noqa: C901 - the dispatch loops, in one coroutine
        """Run until the program finishes or suspends; an escaping error is a VMError."""
        if self.result is not None:
            return self.result
        self.status, self.suspension, self.error = "ready", None, None
        hooked = self.before is not None or self.after is not None
        code, ctx = self.program.code, self.ctx
        call, branch_true, branch_false = Opcode.CALL, Opcode.BRANCH_TRUE, Opcode.BRANCH_FALSE
        jump, nodes, simple = Opcode.JUMP, NODE_OPCODES, self._SIMPLE
        # one coroutine drives the whole program: a run waiting in a node keeps no more
        # (the try costs nothing until a control transfer raises through it)
        while True:
            pc = self.pc
            try:
                while hooked:
                    self.pc = pc
                    op, fn, is_async, target = code[pc]
                    if op in nodes:
                        pc = await self._run_node(pc, op, fn, is_async, target)
                    else:
                        pc = simple[op](self, pc, fn, target)
                while True:
                    op, fn, is_async, target = code[pc]
                    if op is call:
                        self.pc = pc
                        self.value = await fn(ctx) if is_async else fn(ctx)
                        pc += 1
                    elif op is branch_true:
                        self.pc = pc
                        self.value = value = await fn(ctx) if is_async else fn(ctx)
                        pc = target if value else pc + 1
                    elif op is branch_false:
                        self.pc = pc
                        self.value = value = await fn(ctx) if is_async else fn(ctx)
                        pc = pc + 1 if value else target
                    elif op is jump:
                        pc = target
                    else:
                        self.pc = pc
                        if op in nodes:
                            pc = await self._run_node(pc, op, fn, is_async, target)
                        else:
                            pc = simple[op](self, pc, fn, target)
            except _TRANSFERRED as exc:
                outcome = self._transfer(exc)
                if outcome is not None:
                    return outcome

    async def resume(self, value: Any = None) -> Outcome:
        """Continue a suspended run; the next node sees ``ctx.resume_value == value``."""
        if self.result is not None:
            return self.result
        self.ctx.resume_value = value
        while self.ctx.resume_value is not None:  # until a node has consumed it
            outcome = await self.step()
            if outcome is not None:
                return outcome
        return await self.run()

    async def step(self) -> Outcome | None:
        """Execute one instruction; returns the outcome if the program finished or suspended."""
        if self.result is not None:
            return self.result
        self.status, self.suspension = "ready", None
        try:
            self.pc = await self._execute(self.pc)
        except _TRANSFERRED as exc:
            return self._transfer(exc)
        return None

    def snapshot(self) -> dict[str, Any]:
        """The whole run state as a JSON-serialisable dict."""
        return take_snapshot(self)

    @classmethod
    def restore(
        cls,
        program: Program,
        snapshot: dict[str, Any],
        *,
        state_type: type[Any] | None = None,
        deps: Any = None,
        before: Hook | None = None,
        after: Hook | None = None,
    ) -> Interpreter:
        """A new interpreter continuing ``snapshot``; refuses a snapshot of another program."""
        vm = cls(program, None, deps, before, after)
        restore_snapshot(vm, snapshot, state_type)
        return vm

    # -- the instructions --------------------------------------------------------
    async def _execute(self, pc: int) -> int:
        op, arg, is_async, target = self.program.code[pc]
        if op in NODE_OPCODES:
            return await self._run_node(pc, op, arg, is_async, target)
        return self._SIMPLE[op](self, pc, arg, target)

    async def _run_node(self, pc: int, op: Opcode, fn: Any, is_async: bool, target: int) -> int:
        if self.before is not None:
            await _settle(self.before(self, pc))
        ctx = self.ctx  # a node torn down after `close` (a workflow evicted) still ends
        try:
            value = fn(ctx)
            if is_async:
                value = await value
        finally:
            ctx.resume_value = None
        self.value = value
        if op is Opcode.SET_RETURN_NODE:
            self.frames[-1].return_value = value
        after_pc = (target if value else pc + 1) if op is Opcode.BRANCH_TRUE else pc + 1
        if op is Opcode.BRANCH_FALSE and not value:
            after_pc = target
        if self.after is not None:
            self.pc = after_pc  # the node completed: a snapshot or suspend here resumes after it
            await _settle(self.after(self, pc))
        return after_pc

    # -- control transfers --------------------------------------------------------
    def _transfer(self, exc: BaseException) -> Outcome | None:
        """Where an exception leaving the instruction at ``pc`` goes.

        A halt or a suspension ends the loop with its outcome (returned); anything else
        moves ``pc`` to its handler (``None`` returned) or escapes as a VMError.
        """
        if isinstance(exc, _Halt):
            return exc.outcome
        if isinstance(exc, Suspend):
            self.status = "suspended"
            self.suspension = Suspended(exc.reason, exc.payload)
            return self.suspension
        if isinstance(exc, _Reraise):
            self.pc = self._raise_into(exc.handled.exception, self.pc, exc.handled.origin)
        else:
            self.pc = self._raise_into(exc, self.pc, None)
        return None

    def _raise_into(self, exc: BaseException, pc: int, origin: int | None) -> int:
        """Send ``exc`` (raised at ``pc``) to its handler and return the handler's offset.

        With no handler in any frame the state is left as it is and a VMError escapes.
        """
        origin = pc if origin is None else origin
        found = self._find_handler(pc)
        if found is None:
            self.status, self.error = "failed", Handled(exc, origin)
            raise self.to_vm_error(exc, origin) from exc
        frame_index, handler_pc, depth = found
        del self.frames[frame_index + 1 :]
        frame = self.frames[-1]
        handled = frame.handled
        if handled and exc.__context__ is None and handled[-1].exception is not exc:
            exc.__context__ = handled[-1].exception
        frame.handled = (*handled[:depth], Handled(exc, origin))
        return handler_pc

    def _find_handler(self, pc: int) -> tuple[int, int, int] | None:
        handler_at = self.program.handler_at
        for index in range(len(self.frames) - 1, -1, -1):
            handler = handler_at[pc]
            if handler is not None:
                return index, handler[0], handler[1]
            pc = self.frames[index].return_pc - 1
        return None

    def to_vm_error(self, exc: BaseException, origin: int) -> VMError:
        """The VMError reporting ``exc`` raised at ``origin``."""
        found = self.program.node_at(origin)
        name = None if found is None else found.name
        where = f"pc {origin}" + ("" if name is None else f", node {name!r}")
        return VMError(f"{type(exc).__name__}: {exc} (at {where})", pc=origin, node=name)

    # -- the other opcodes: one small handler each, dispatched through _SIMPLE ------
    def _op_nop(self, pc: int, _arg: Any, _target: int) -> int:
        return pc + 1

    def _op_jump(self, _pc: int, _arg: Any, target: int) -> int:
        return target

    def _op_jump_if_true(self, pc: int, _arg: Any, target: int) -> int:
        return target if self.value else pc + 1

    def _op_jump_if_false(self, pc: int, _arg: Any, target: int) -> int:
        return pc + 1 if self.value else target

    def _op_suspend(self, pc: int, arg: Any, _target: int) -> int:
        self.pc, self.status = pc + 1, "suspended"
        self.suspension = Suspended(arg[0], arg[1])
        raise _Halt(self.suspension)

    def _op_set_return(self, pc: int, arg: Any, _target: int) -> int:
        self.frames[-1].return_value = arg
        return pc + 1

    def _op_return(self, pc: int, _arg: Any, _target: int) -> int:
        frame = self.frames[-1]
        if len(self.frames) == 1:
            self.value = frame.return_value
            self.status, self.result = "finished", Finished(frame.return_value)
            raise _Halt(self.result)
        self.frames.pop()
        self.value = frame.return_value
        return frame.return_pc

    def _op_call_sub(self, pc: int, arg: Any, target: int) -> int:
        if len(self.frames) >= MAX_FRAMES:
            raise RecursionError(f"CALL({arg!r}): more than {MAX_FRAMES} nested sub-program calls")
        self.frames.append(Frame(pc + 1))
        return target

    def _op_match_except(self, pc: int, arg: Any, target: int) -> int:
        return pc + 1 if isinstance(self.frames[-1].handled[-1].exception, arg) else target

    def _op_pop_except(self, pc: int, _arg: Any, _target: int) -> int:
        frame = self.frames[-1]
        frame.handled = frame.handled[:-1]
        return pc + 1

    def _op_reraise(self, _pc: int, _arg: Any, _target: int) -> int:
        raise _Reraise(self.frames[-1].handled[-1])

    _SIMPLE: ClassVar[Mapping[Opcode, _OpHandler]] = {
        Opcode.NOP: _op_nop,
        Opcode.JUMP: _op_jump,
        Opcode.JUMP_IF_TRUE: _op_jump_if_true,
        Opcode.JUMP_IF_FALSE: _op_jump_if_false,
        Opcode.SUSPEND: _op_suspend,
        Opcode.SET_RETURN: _op_set_return,
        Opcode.RETURN: _op_return,
        Opcode.CALL_SUB: _op_call_sub,
        Opcode.MATCH_EXCEPT: _op_match_except,
        Opcode.POP_EXCEPT: _op_pop_except,
        Opcode.RERAISE: _op_reraise,
    }
    """The opcodes that run no node, built once for the class: ``handler(vm, pc, arg, target)``."""


async def _settle(result: Awaitable[None] | None) -> None:
    if result is not None and inspect.isawaitable(result):
        await result
