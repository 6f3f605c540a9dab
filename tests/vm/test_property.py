"""Random nested programs: the VM must match a tree-walking reference interpreter.

The reference runs the program tree directly with Python's own loops, try/except/finally
and exceptions for BREAK/CONTINUE/RETURN, so Python itself is the oracle for the semantics.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from ponder.exceptions import VMError
from ponder.vm import (
    BREAK,
    CALL,
    CONTINUE,
    DO,
    IF,
    RETURN,
    SUB,
    TRY,
    WHILE,
    Finished,
    Interpreter,
    NodeContext,
    compile_program,
    node,
)

LIMIT = 3  # a condition is truthy at most LIMIT + 1 times per run, so every loop ends


class ErrA(Exception):
    pass


class ErrB(Exception):
    pass


ERRORS = {"A": ErrA, "B": ErrB}
SELECTORS: dict[str, Any] = {"A": ErrA, "B": ErrB, "AB": (ErrA, ErrB), "any": Exception}


def cond_value(name: str, count: int) -> bool:
    pattern = (int(name[1:]) * 37 + 11) % 64
    return count <= LIMIT and bool(pattern >> (count % 6) & 1)


# -- random program trees ------------------------------------------------------------
Tree = tuple[Any, ...]


@st.composite
def statements(draw: Any, depth: int, in_loop: bool, in_handler: bool, subs: int) -> Tree:
    kinds = ["act", "act", "raise", "return"]
    kinds += ["break", "continue"] if in_loop else []
    kinds += ["reraise"] if in_handler else []
    kinds += ["call"] if subs else []
    kinds += ["seq", "if", "while", "do", "try", "try"] if depth > 0 else []
    kind = draw(st.sampled_from(kinds))
    cond = st.integers(0, 7).map(lambda i: f"c{i}")

    def block(loop: bool = in_loop, handler: bool = in_handler) -> Tree:
        parts = draw(st.lists(statements(depth - 1, loop, handler, subs), min_size=1, max_size=3))
        return ("seq", parts)

    leaves: dict[str, Callable[[], Tree]] = {
        "act": lambda: ("act", f"a{draw(st.integers(0, 5))}"),
        "raise": lambda: (
            "raise",
            f"r{draw(st.sampled_from(sorted(ERRORS)))}{draw(st.integers(0, 2))}",
        ),
        "return": lambda: ("return", draw(st.integers(0, 9))),
        "call": lambda: ("call", draw(st.integers(0, subs - 1))),
    }
    if kind in leaves:
        return leaves[kind]()
    if kind in ("break", "continue", "reraise"):
        return (kind,)
    if kind == "seq":
        return block()
    if kind == "if":
        branches = draw(st.lists(st.tuples(cond, st.just(None)), min_size=1, max_size=3))
        orelse = block() if draw(st.booleans()) else None
        return ("if", [(c, block()) for c, _ in branches], orelse)
    if kind == "while":
        return ("while", draw(cond), block(loop=True))
    if kind == "do":
        return ("do", block(loop=True), draw(cond))
    return _try(draw, block, in_loop)


def _try(draw: Any, block: Any, in_loop: bool) -> Tree:
    selectors = draw(st.lists(st.sampled_from(sorted(SELECTORS)), max_size=2))
    handlers = [(sel, block(handler=True)) for sel in selectors]
    final = block(handler=False) if not handlers or draw(st.booleans()) else None
    orelse = block() if handlers and draw(st.booleans()) else None
    return ("try", block(), handlers, orelse, final)


@st.composite
def programs(draw: Any) -> tuple[Tree, list[Tree]]:
    count = draw(st.integers(0, 2))
    # sub bodies call no subs, so there is no recursion
    subs = [draw(statements(2, False, False, 0)) for _ in range(count)]
    main = draw(statements(3, False, False, count))
    return main, subs


# -- the reference interpreter -------------------------------------------------------
class _Break(BaseException):
    pass


class _Continue(BaseException):
    pass


class _Return(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class Reference:
    def __init__(self, subs: list[Tree]) -> None:
        self.trace: list[str] = []
        self.counts: dict[str, int] = {}
        self.handling: list[BaseException] = []
        self.subs = subs

    def run(self, tree: Tree) -> tuple[Any, ...]:
        try:
            self.exec(tree)
        except _Return as ret:
            return ("finished", ret.value)
        except Exception as exc:
            return ("error", type(exc).__name__, str(exc))
        return ("finished", None)

    def cond(self, name: str) -> bool:
        count = self.counts[name] = self.counts.get(name, 0) + 1
        self.trace.append(name)
        return cond_value(name, count)

    def exec(self, tree: Tree) -> None:  # noqa: C901 - one branch per construct, on purpose
        kind = tree[0]
        if kind == "act":
            self.trace.append(tree[1])
        elif kind == "raise":
            self.trace.append(tree[1])
            raise ERRORS[tree[1][1]](tree[1])
        elif kind == "reraise":
            self.trace.append("reraise")
            raise self.handling[-1]
        elif kind == "break":
            raise _Break
        elif kind == "continue":
            raise _Continue
        elif kind == "return":
            raise _Return(tree[1])
        elif kind == "call":
            self.trace.append(f"ret:{self.call(tree[1])}")
        elif kind == "seq":
            for part in tree[1]:
                self.exec(part)
        elif kind == "if":
            self.exec_if(tree)
        elif kind in ("while", "do"):
            self.exec_loop(tree)
        else:
            self.exec_try(tree)

    def call(self, index: int) -> Any:
        saved, self.handling = self.handling, []
        try:
            self.exec(self.subs[index])
        except _Return as ret:
            return ret.value
        finally:
            self.handling = saved
        return None

    def exec_if(self, tree: Tree) -> None:
        for cond, body in tree[1]:
            if self.cond(cond):
                self.exec(body)
                return
        if tree[2] is not None:
            self.exec(tree[2])

    def exec_loop(self, tree: Tree) -> None:
        is_do = tree[0] == "do"
        body, cond = (tree[1], tree[2]) if is_do else (tree[2], tree[1])
        if not is_do and not self.cond(cond):
            return
        while True:
            try:
                self.exec(body)
            except _Break:
                return
            except _Continue:
                pass
            if not self.cond(cond):
                return

    def exec_try(self, tree: Tree) -> None:
        _, body, handlers, orelse, final = tree
        try:
            try:
                self.exec(body)
            except Exception as exc:
                for selector, handler in handlers:
                    if isinstance(exc, SELECTORS[selector]):
                        self.handle(exc, handler)
                        break
                else:
                    raise
            else:
                if orelse is not None:
                    self.exec(orelse)
        finally:
            if final is not None:
                self.exec(final)

    def handle(self, exc: Exception, handler: Tree) -> None:
        self.handling.append(exc)
        try:
            self.exec(handler)
        finally:
            self.handling.pop()


# -- the same tree as a VM program ---------------------------------------------------
class PState(BaseModel):
    trace: list[str] = []
    counts: dict[str, int] = {}


class Builder:
    def __init__(self, subs: list[Tree]) -> None:
        self.nodes: dict[str, Any] = {}
        self.subs = [SUB(f"sub{i}", self.build(tree)) for i, tree in enumerate(subs)]

    def named(self, name: str, fn: Any) -> Any:
        if name not in self.nodes:
            self.nodes[name] = node(fn, name=name)
        return self.nodes[name]

    def act(self, label: str) -> Any:
        return self.named(label, lambda ctx: ctx.state.trace.append(label))

    def raiser(self, label: str) -> Any:
        def fail(ctx: NodeContext) -> None:
            ctx.state.trace.append(label)
            raise ERRORS[label[1]](label)

        return self.named(label, fail)

    def cond(self, name: str) -> Any:
        def test(ctx: NodeContext) -> bool:
            count = ctx.state.counts[name] = ctx.state.counts.get(name, 0) + 1
            ctx.state.trace.append(name)
            return cond_value(name, count)

        return self.named(name, test)

    def build(self, tree: Tree) -> Any:  # noqa: C901 - one branch per construct, on purpose
        kind = tree[0]
        if kind == "act":
            return self.act(tree[1])
        if kind == "raise":
            return self.raiser(tree[1])
        if kind == "reraise":
            return self.named("reraise", _reraise)
        if kind == "break":
            return BREAK
        if kind == "continue":
            return CONTINUE
        if kind == "return":
            return RETURN(tree[1])
        if kind == "call":
            return CALL(self.subs[tree[1]]) >> self.named("show", _show)
        if kind == "seq":
            return [self.build(part) for part in tree[1]]
        if kind == "if":
            (first, body), *rest = tree[1]
            built = IF(self.cond(first), self.build(body))
            for cond, branch in rest:
                built = built.ELIF(self.cond(cond), self.build(branch))
            return built if tree[2] is None else built.ELSE(self.build(tree[2]))
        if kind == "while":
            return WHILE(self.cond(tree[1])).ACTION(self.build(tree[2]))
        if kind == "do":
            return DO(self.build(tree[1])).WHILE(self.cond(tree[2]))
        return self.build_try(tree)

    def build_try(self, tree: Tree) -> Any:
        _, body, handlers, orelse, final = tree
        built = TRY(self.build(body))
        for selector, handler in handlers:
            built = built.EXCEPT(SELECTORS[selector], self.build(handler))
        if orelse is not None:
            built = built.ELSE(self.build(orelse))
        return built if final is None else built.FINALLY(self.build(final))


def _reraise(ctx: NodeContext) -> None:
    ctx.state.trace.append("reraise")
    assert ctx.exception is not None
    raise ctx.exception


def _show(ctx: NodeContext) -> None:
    ctx.state.trace.append(f"ret:{ctx.value}")


class Hooks:
    """``before``/``after`` hooks that put a run on the hooked dispatch path, as a store does.

    They record the node at each pc, and after each node snapshot the run and restore it,
    as the checkpointer does, noting whether the restored copy stands where the run stands.
    """

    def __init__(self) -> None:
        self.before_nodes: list[str] = []
        self.after_nodes: list[str] = []
        self.restored_ok: list[bool] = []

    async def before(self, vm: Interpreter, pc: int) -> None:
        found = vm.program.node_at(pc)
        self.before_nodes.append("?" if found is None else found.name)

    def after(self, vm: Interpreter, pc: int) -> None:
        found = vm.program.node_at(pc)
        self.after_nodes.append("?" if found is None else found.name)
        blob = json.loads(json.dumps(vm.snapshot()))
        restored = Interpreter.restore(vm.program, blob, state_type=PState)
        self.restored_ok.append(restored.pc == vm.pc and restored.state == vm.state)


def run_vm(
    main: Tree, subs: list[Tree], hooks: Hooks | None = None
) -> tuple[tuple[Any, ...], list[str]]:
    builder = Builder(subs)
    program = compile_program(builder.build(main))
    state = PState()
    before = None if hooks is None else hooks.before
    after = None if hooks is None else hooks.after
    try:
        outcome = asyncio.run(Interpreter(program, state, before=before, after=after).run())
    except VMError as error:
        cause = error.__cause__
        return ("error", type(cause).__name__, str(cause)), state.trace
    assert isinstance(outcome, Finished)
    return ("finished", outcome.value), state.trace


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_vm_matches_the_reference_interpreter(program: tuple[Tree, list[Tree]]) -> None:
    main, subs = program
    reference = Reference(subs)
    expected = reference.run(main)
    result, trace = run_vm(main, subs)
    assert trace == reference.trace
    assert result == expected


def node_of(entry: str) -> str:
    """The node that wrote a trace entry (each node call writes exactly one)."""
    return "show" if entry.startswith("ret:") else entry


def raises(entry: str) -> bool:
    return entry.startswith("r") and not entry.startswith("ret:")  # rA0, rB1, reraise


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_hooked_dispatch_path_matches_the_reference_too(
    program: tuple[Tree, list[Tree]],
) -> None:
    main, subs = program
    reference = Reference(subs)
    expected = reference.run(main)
    hooks = Hooks()
    result, trace = run_vm(main, subs, hooks)
    assert trace == reference.trace
    assert result == expected
    assert hooks.before_nodes == [node_of(entry) for entry in trace]
    assert hooks.after_nodes == [node_of(entry) for entry in trace if not raises(entry)]
    assert all(hooks.restored_ok)
