"""Compile a block description into a flat :class:`Program`.

Jumps are labels resolved to offsets at the end. BREAK, CONTINUE and RETURN leaving a
TRY get an inlined copy of each FINALLY body they cross (as CPython does), so the
interpreter needs no block stack; exception handlers go to a per-offset table.
"""

from __future__ import annotations

import difflib
import gc
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ponder.exceptions import CompileError
from ponder.vm.builder import (
    Break,
    Call,
    Continue,
    DoWhile,
    If,
    Nop,
    Return,
    Sub,
    SuspendPoint,
    Try,
    While,
)
from ponder.vm.nodes import Block, Node, Seq, node, to_block
from ponder.vm.ops import Opcode
from ponder.vm.program import Assembly, Program

__all__ = ["compile_program"]

_Handler = tuple[int, int] | None  # (handler label, depth of handled exceptions)


@dataclass(frozen=True, slots=True)
class _Loop:
    cont: int
    brk: int


@dataclass(frozen=True, slots=True)
class _Guard:
    """A region left by unwinding: pop the handled exception and/or run a FINALLY copy."""

    outer: _Scope
    final: Block | None
    pops: bool


@dataclass(frozen=True, slots=True)
class _FrameEdge:
    """The start of a sub-program: BREAK, CONTINUE and unwinding stop here."""


@dataclass(frozen=True, slots=True)
class _Scope:
    entries: tuple[_Loop | _Guard | _FrameEdge, ...] = ()
    handler: _Handler = None
    depth: int = 0

    def push(
        self, entry: _Loop | _Guard, handler: _Handler | bool = False, depth: int = -1
    ) -> _Scope:
        return _Scope(
            (*self.entries, entry),
            self.handler if handler is False else handler,  # type: ignore[arg-type]
            self.depth if depth < 0 else depth,
        )


@dataclass
class _Compiler:
    asm: Assembly = field(default_factory=Assembly)
    nodes: dict[str, Node] = field(default_factory=dict)
    subs: dict[str, Sub] = field(default_factory=dict)
    sub_labels: dict[str, int] = field(default_factory=dict)

    # -- emission -----------------------------------------------------------------
    def label(self) -> int:
        return self.asm.label()

    def place(self, label: int) -> None:
        self.asm.place(label)

    def _emit(self, op: Opcode, arg: Any, target: int, scope: _Scope) -> None:
        if isinstance(arg, Node):
            self.asm.emit_node(op, arg, target, scope.handler)
        else:
            self.asm.emit(op, arg, target, scope.handler)

    def _node(self, block: Node) -> Node:
        known = self.nodes.setdefault(block.name, block)  # may be a new node; then `known is block`
        if known is not block and (known.fn is not block.fn or known.blocking != block.blocking):
            raise CompileError(
                f"node {block.name!r}: two different callables share this name; "
                "give one of them another name with node(fn, name=...)"
            )
        return known

    # -- blocks -------------------------------------------------------------------
    def block(self, block: Block, scope: _Scope) -> None:
        known, run = self.nodes, []  # a run of plain nodes is emitted in bulk
        stack: list[Iterator[Any]] = [iter((block,))]
        while stack:
            for item in stack[-1]:
                kind = type(item)
                if kind is Node:
                    if known.setdefault(item.name, item) is not item:
                        item = self._node(item)
                    run.append(item)
                elif kind is Seq:
                    stack.append(iter(item.parts))
                    break
                else:
                    self.asm.emit_nodes(Opcode.CALL, run, scope.handler)
                    run = []
                    self._compound(item, scope)
            else:
                stack.pop()
        self.asm.emit_nodes(Opcode.CALL, run, scope.handler)

    def _compound(self, item: Any, scope: _Scope) -> None:
        """Compile a block that is not a plain node or a sequence."""
        match item:
            case If():
                self._if(item, scope)
            case While():
                self._while(item, scope)
            case DoWhile():
                self._do_while(item, scope)
            case Try():
                self._try(item, scope)
            case Call():
                self._call(item, scope)
            case Sub():
                self.define(item)
            case _:
                self._simple(item, scope)

    def _simple(self, item: Any, scope: _Scope) -> None:
        match item:
            case Break():
                self._break(scope)
            case Continue():
                self._continue(scope)
            case Return():
                self._return(item, scope)
            case SuspendPoint():
                self._suspend(item, scope)
            case Nop():
                self._emit(Opcode.NOP, None, -1, scope)
            case _:
                raise CompileError(f"{item!r} is not a block ponder can compile")

    def body(self, block: Block | None, scope: _Scope, what: str) -> None:
        start = len(self.asm)
        if block is not None:
            self.block(block, scope)
        if len(self.asm) == start:
            raise CompileError(f"{what}: the body is empty (use NOP for a body that does nothing)")

    def cond(
        self, cond: Block | None, jump_if: bool, target: int, scope: _Scope, what: str
    ) -> None:
        if isinstance(cond, Node):
            op = Opcode.BRANCH_TRUE if jump_if else Opcode.BRANCH_FALSE
            self._emit(op, self._node(cond), target, scope)
        elif isinstance(cond, Call):
            self._call(cond, scope)
            self._emit(
                Opcode.JUMP_IF_TRUE if jump_if else Opcode.JUMP_IF_FALSE, None, target, scope
            )
        else:
            shown = "nothing" if cond is None else cond.describe()
            raise CompileError(f"{what}: the condition must be a node or a CALL, got {shown}")

    def _if(self, block: If, scope: _Scope) -> None:
        end = self.label()
        last = len(block.branches) - 1
        for index, (cond, body) in enumerate(block.branches):
            skip = end if index == last and block.orelse is None else self.label()
            self.cond(cond, False, skip, scope, f"{block.describe()} branch {index + 1}")
            self.body(body, scope, f"{block.describe()} branch {index + 1}")
            if skip != end:
                self._emit(Opcode.JUMP, None, end, scope)
                self.place(skip)
        if block.orelse is not None:
            self.body(block.orelse, scope, f"{block.describe()}.ELSE")
        self.place(end)

    def _while(self, block: While, scope: _Scope) -> None:
        what = block.describe()
        if block.body is None:
            raise CompileError(f"{what}: missing .ACTION(body)")
        top, test, end = self.label(), self.label(), self.label()
        self._emit(Opcode.JUMP, None, test, scope)
        self.place(top)
        self.body(block.body, scope.push(_Loop(test, end)), f"{what}.ACTION")
        self.place(test)
        self.cond(block.cond, True, top, scope, what)
        self.place(end)

    def _do_while(self, block: DoWhile, scope: _Scope) -> None:
        what = block.describe()
        if block.cond is None:
            raise CompileError(f"{what}: missing .WHILE(cond)")
        top, test, end = self.label(), self.label(), self.label()
        self.place(top)
        self.body(block.body, scope.push(_Loop(test, end)), f"DO body of {what}")
        self.place(test)
        self.cond(block.cond, True, top, scope, what)
        self.place(end)

    def _loop_exit(self, scope: _Scope, what: str) -> tuple[int, _Loop]:
        for index in range(len(scope.entries) - 1, -1, -1):
            entry = scope.entries[index]
            if isinstance(entry, _Loop):
                return index, entry
            if isinstance(entry, _FrameEdge):
                break
        raise CompileError(f"{what} outside a loop (a SUB cannot leave its caller's loop)")

    def unwind(self, scope: _Scope, stop: int) -> None:
        """Emit the exits from every TRY region above entry ``stop``, innermost first."""
        for entry in reversed(scope.entries[stop + 1 :]):
            if isinstance(entry, _Guard):
                if entry.pops:
                    self._emit(Opcode.POP_EXCEPT, None, -1, entry.outer)
                if entry.final is not None:
                    self.block(entry.final, entry.outer)

    def _break(self, scope: _Scope) -> None:
        index, loop = self._loop_exit(scope, "BREAK")
        self.unwind(scope, index)
        self._emit(Opcode.JUMP, None, loop.brk, scope)

    def _continue(self, scope: _Scope) -> None:
        index, loop = self._loop_exit(scope, "CONTINUE")
        self.unwind(scope, index)
        self._emit(Opcode.JUMP, None, loop.cont, scope)

    def _return(self, block: Return, scope: _Scope) -> None:
        value = block.value
        if isinstance(value, Block) and not isinstance(value, Node):
            raise CompileError(f"RETURN: the value must be a constant or a node, got {value!r}")
        if isinstance(value, Node) or callable(value):
            made = value if isinstance(value, Node) else node(value)
            self._emit(Opcode.SET_RETURN_NODE, self._node(made), -1, scope)
        else:  # always set: a RETURN abandoned by a FINALLY's BREAK must not leak its value
            self._emit(Opcode.SET_RETURN, _json_constant(value, "RETURN"), -1, scope)
        edge = next(
            (
                i
                for i in range(len(scope.entries) - 1, -1, -1)
                if isinstance(scope.entries[i], _FrameEdge)
            ),
            -1,
        )
        self.unwind(scope, edge)
        self._emit(Opcode.RETURN, None, -1, scope)

    def _suspend(self, block: SuspendPoint, scope: _Scope) -> None:
        payload = _json_constant(block.payload, block.describe())
        self._emit(Opcode.SUSPEND, (block.reason, payload), -1, scope)

    # -- sub-programs -------------------------------------------------------------
    def define(self, sub: Sub) -> None:
        known = self.subs.setdefault(sub.name, sub)
        if known is not sub and known.body is not sub.body:
            raise CompileError(f"SUB({sub.name!r}) is defined twice with different bodies")

    def _call(self, block: Call, scope: _Scope) -> None:
        if isinstance(block.target, Sub):
            self.define(block.target)
        if block.name not in self.sub_labels:
            self.sub_labels[block.name] = self.label()
        self._emit(Opcode.CALL_SUB, block.name, self.sub_labels[block.name], scope)

    def sub_bodies(self) -> dict[str, int]:
        compiled: set[str] = set()
        while pending := [name for name in self.sub_labels if name not in compiled]:
            for name in pending:
                compiled.add(name)
                sub = self.subs.get(name)
                if sub is None:
                    raise CompileError(
                        f"CALL({name!r}): no such SUB{_did_you_mean(name, self.subs)}"
                    )
                self.place(self.sub_labels[name])
                edge_scope = _Scope((_FrameEdge(),))
                self.body(sub.body, edge_scope, sub.describe())
                self._emit(Opcode.SET_RETURN, None, -1, edge_scope)
                self._emit(Opcode.RETURN, None, -1, edge_scope)
        return {name: self.asm.labels[label] for name, label in self.sub_labels.items()}

    # -- TRY ----------------------------------------------------------------------
    def _try(self, block: Try, scope: _Scope) -> None:
        _check_try(block)
        end = self.label()
        on_except = self.label() if block.handlers else -1
        on_final = self.label() if block.final is not None else -1
        guard = _Guard(scope, block.final, pops=False)
        fin_handler: _Handler = (on_final, scope.depth) if on_final >= 0 else scope.handler
        first = on_except if on_except >= 0 else on_final
        self.body(block.body, scope.push(guard, (first, scope.depth)), "TRY body")
        if block.orelse is not None:
            self.body(block.orelse, scope.push(guard, fin_handler), "TRY ... ELSE")
        if block.final is not None:
            self.body(block.final, scope, "TRY ... FINALLY")
        self._emit(Opcode.JUMP, None, end, scope)
        if on_except >= 0:
            self.place(on_except)
            inside = scope.push(_Guard(scope, block.final, pops=True), fin_handler, scope.depth + 1)
            self._handlers(block, inside, scope, end)
        if on_final >= 0:
            self.place(on_final)
            inside = scope.push(_Guard(scope, None, pops=True), False, scope.depth + 1)
            self.block(block.final, inside)  # type: ignore[arg-type]
            self._emit(Opcode.RERAISE, None, -1, inside)
        self.place(end)

    def _handlers(self, block: Try, inside: _Scope, scope: _Scope, end: int) -> None:
        for exc_types, body in block.handlers:
            types = exc_types if isinstance(exc_types, tuple) else (exc_types,)
            what = f"TRY ... EXCEPT({', '.join(t.__name__ for t in types)})"
            following = self.label()
            self._emit(Opcode.MATCH_EXCEPT, types, following, inside)
            self.body(body, inside, what)
            self._emit(Opcode.POP_EXCEPT, None, -1, inside)
            if block.final is not None:
                self.block(block.final, scope)
            self._emit(Opcode.JUMP, None, end, scope)
            self.place(following)
        self._emit(Opcode.RERAISE, None, -1, inside)


def _check_try(block: Try) -> None:
    if not block.handlers and block.final is None:
        raise CompileError("TRY: needs at least one EXCEPT or a FINALLY")
    if block.orelse is not None and not block.handlers:
        raise CompileError("TRY ... ELSE: an ELSE needs at least one EXCEPT before it")
    for exc_types, _ in block.handlers:
        types = exc_types if isinstance(exc_types, tuple) else (exc_types,)
        if not types or not all(isinstance(t, type) and issubclass(t, Exception) for t in types):
            raise CompileError(
                f"TRY ... EXCEPT({exc_types!r}): expected an Exception subclass or a tuple of them"
            )


def _json_constant(value: Any, what: str) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise CompileError(f"{what}: {value!r} is not JSON-serialisable ({exc})") from None
    return value


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def compile_program(main: Any, *, subs: Iterable[Sub] = ()) -> Program:
    """Compile ``main`` (a block, callable or list) and the ``subs`` it calls by name."""
    collecting = gc.isenabled()
    gc.disable()  # compiling allocates many small, acyclic objects: skip the collector passes
    try:
        return _compile(main, subs)
    finally:
        if collecting:
            gc.enable()


def _compile(main: Any, subs: Iterable[Sub]) -> Program:
    compiler = _Compiler()
    for sub in subs:
        if not isinstance(sub, Sub):
            raise CompileError(f"compile_program(subs=...): {sub!r} is not a SUB")
        compiler.define(sub)
    root = _Scope()
    compiler.body(to_block(main), root, "program")
    compiler._emit(Opcode.SET_RETURN, None, -1, root)
    compiler._emit(Opcode.RETURN, None, -1, root)
    entries = compiler.sub_bodies()
    return Program.from_assembly(compiler.asm, list(compiler.nodes.values()), entries)
