"""The combinators programs are written with: nodes, ``>>``, IF, WHILE, DO, TRY and friends.

Everything here only *describes* a program; :func:`ponder.vm.compile_program` turns the
description into flat instructions and reports malformed ones as ``CompileError``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, overload

from ponder.exceptions import CompileError

__all__ = [
    "BREAK",
    "CALL",
    "CONTINUE",
    "DO",
    "IF",
    "NATIVE_DO",
    "NATIVE_IF",
    "NATIVE_WHILE",
    "NOP",
    "RETURN",
    "SUB",
    "SUSPEND",
    "TRY",
    "WHILE",
    "Block",
    "BlockLike",
    "Break",
    "Call",
    "Continue",
    "DoWhile",
    "If",
    "Node",
    "Nop",
    "Return",
    "Seq",
    "Sub",
    "SuspendPoint",
    "Try",
    "While",
    "node",
    "to_block",
]

BlockLike: TypeAlias = "Block | Callable[[Any], Any] | Sequence[Any]"


class Block:
    """A piece of a program; ``a >> b`` runs ``a`` then ``b``."""

    __slots__ = ()

    def __rshift__(self, other: Any) -> Seq:
        return Seq((self, to_block(other)))

    def __rrshift__(self, other: Any) -> Seq:
        return Seq((to_block(other), self))

    def describe(self) -> str:
        """A short readable form used in error messages and ``dis``."""
        return type(self).__name__.upper()

    def __repr__(self) -> str:
        return self.describe()


class Seq(Block):
    """Blocks run one after the other (``a >> b >> c``)."""

    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[Block]) -> None:
        self.parts = tuple(parts)

    def describe(self) -> str:
        """A short readable form of this block."""
        return " >> ".join(p.describe() for p in self.parts) or "(empty)"


class Node(Block):
    """A named step: a sync or async callable taking the run context.

    ``blocking=True`` runs a sync callable in a worker thread. ``run`` is what the
    interpreter calls and ``awaits`` whether it awaits the result.
    """

    __slots__ = ("awaits", "blocking", "fn", "is_async", "name", "run")

    def __init__(self, fn: Callable[[Any], Any], name: str, *, blocking: bool = False) -> None:
        if not callable(fn):
            raise CompileError(f"node {name!r}: {fn!r} is not callable")
        if not isinstance(name, str) or not name:
            raise CompileError(f"node: a node needs a non-empty string name, got {name!r}")
        self.fn = fn
        self.name = name
        self.is_async = inspect.iscoroutinefunction(fn) or (
            not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)
        )
        self.blocking = blocking
        if blocking and self.is_async:
            raise CompileError(f"node {name!r}: blocking=True is for sync callables only")
        self.run: Callable[[Any], Any] = functools.partial(_in_thread, fn) if blocking else fn
        self.awaits = blocking or self.is_async

    def __call__(self, ctx: Any) -> Any:
        """Call the wrapped function (handy in tests)."""
        return self.fn(ctx)

    def describe(self) -> str:
        """A short readable form of this block."""
        return self.name


async def _in_thread(fn: Callable[[Any], Any], ctx: Any) -> Any:
    return await asyncio.to_thread(fn, ctx)


def _default_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise CompileError(f"node: cannot name {fn!r}; pass node(fn, name=...)")
    code = getattr(fn, "__code__", None)
    if name.endswith("<lambda>") and code is not None:
        name += f"@{code.co_firstlineno}"  # tell apart the lambdas of one function
    return name


@overload
def node(fn: Callable[[Any], Any], *, name: str | None = None, blocking: bool = False) -> Node: ...
@overload
def node(
    fn: None = None, *, name: str | None = None, blocking: bool = False
) -> Callable[[Callable[[Any], Any]], Node]: ...
def node(
    fn: Callable[[Any], Any] | None = None, *, name: str | None = None, blocking: bool = False
) -> Node | Callable[[Callable[[Any], Any]], Node]:
    """Make a node: ``@node``, ``@node(name=..., blocking=...)`` or ``node(fn, name=...)``."""
    if fn is None:
        return lambda f: node(f, name=name, blocking=blocking)
    if isinstance(fn, Node):
        return Node(fn.fn, fn.name if name is None else name, blocking=blocking)
    return Node(fn, _default_name(fn) if name is None else name, blocking=blocking)


def to_block(value: Any) -> Block:
    """A block from a block, a callable (wrapped as a node) or a list of those (a sequence)."""
    if isinstance(value, Block):
        return value
    if isinstance(value, list | tuple):
        return Seq([v if isinstance(v, Block) else to_block(v) for v in value])
    if callable(value):
        wrapped: Node = node(value)
        return wrapped
    raise CompileError(f"{value!r} is not a block, a callable or a list of them")


def _body(value: Any) -> Block:
    return Seq(()) if value is None else to_block(value)


def _condition(value: Any) -> Block:
    return to_block(value)


class If(Block):
    """``IF(cond, body).ELIF(cond, body).ELSE(body)``."""

    __slots__ = ("branches", "orelse")

    def __init__(self, branches: tuple[tuple[Block, Block], ...], orelse: Block | None) -> None:
        self.branches = branches
        self.orelse = orelse

    def ELIF(self, cond: Any, body: Any) -> If:
        """Add a branch tried when every earlier condition was falsy."""
        if self.orelse is not None:
            raise CompileError(f"{self.describe()}: ELIF after ELSE")
        return If((*self.branches, (_condition(cond), _body(body))), None)

    def ELSE(self, body: Any) -> If:
        """Add the branch run when every condition was falsy."""
        if self.orelse is not None:
            raise CompileError(f"{self.describe()}: a second ELSE")
        return If(self.branches, _body(body))

    def describe(self) -> str:
        """A short readable form of this block."""
        return f"IF({self.branches[0][0].describe()})"


def IF(cond: Any, body: Any) -> If:
    """Run ``body`` if ``cond`` (a node) returns a truthy value."""
    return If(((_condition(cond), _body(body)),), None)


class While(Block):
    """``WHILE(cond).ACTION(body)``: test first, then run the body, while truthy."""

    __slots__ = ("body", "cond")

    def __init__(self, cond: Block, body: Block | None) -> None:
        self.cond = cond
        self.body = body

    def ACTION(self, body: Any) -> While:
        """Set the loop body."""
        return While(self.cond, _body(body))

    def describe(self) -> str:
        """A short readable form of this block."""
        return f"WHILE({self.cond.describe()})"


def WHILE(cond: Any) -> While:
    """A loop testing ``cond`` before each iteration; give the body with ``.ACTION``."""
    return While(_condition(cond), None)


class DoWhile(Block):
    """``DO(body).WHILE(cond)``: run the body, then test, while truthy."""

    __slots__ = ("body", "cond")

    def __init__(self, body: Block, cond: Block | None) -> None:
        self.body = body
        self.cond = cond

    def WHILE(self, cond: Any) -> DoWhile:
        """Set the condition tested after each iteration."""
        return DoWhile(self.body, _condition(cond))

    def describe(self) -> str:
        """A short readable form of this block."""
        return "DO(...).WHILE" if self.cond is None else f"DO(...).WHILE({self.cond.describe()})"


def DO(body: Any) -> DoWhile:
    """A loop running ``body`` at least once; give the condition with ``.WHILE``."""
    return DoWhile(_body(body), None)


ExceptTypes = type[BaseException] | tuple[type[BaseException], ...]


class Try(Block):
    """``TRY(body).EXCEPT(E, handler).ELSE(body).FINALLY(body)`` with Python's semantics."""

    __slots__ = ("body", "final", "handlers", "orelse")

    def __init__(
        self,
        body: Block,
        handlers: tuple[tuple[Any, Block], ...] = (),
        orelse: Block | None = None,
        final: Block | None = None,
    ) -> None:
        self.body = body
        self.handlers = handlers
        self.orelse = orelse
        self.final = final

    def EXCEPT(self, exc_type: Any, handler: Any) -> Try:
        """Run ``handler`` for an exception that is an instance of ``exc_type`` (or a tuple)."""
        return Try(self.body, (*self.handlers, (exc_type, _body(handler))), self.orelse, self.final)

    def ELSE(self, body: Any) -> Try:
        """Run ``body`` when the TRY body raised nothing."""
        return Try(self.body, self.handlers, _body(body), self.final)

    def FINALLY(self, body: Any) -> Try:
        """Run ``body`` however the block is left: normally, by exception, BREAK or RETURN."""
        return Try(self.body, self.handlers, self.orelse, _body(body))

    def describe(self) -> str:
        """A short readable form of this block."""
        return "TRY"


def TRY(body: Any) -> Try:
    """A protected block; add ``.EXCEPT``, ``.ELSE`` and ``.FINALLY``."""
    return Try(_body(body))


class Break(Block):
    """Leave the innermost loop (running the FINALLY blocks on the way)."""

    __slots__ = ()

    def __call__(self) -> Break:
        """The same constant, so that ``Break()`` reads like the bare name."""
        return self


class Continue(Block):
    """Go to the innermost loop's next test (running the FINALLY blocks on the way)."""

    __slots__ = ()

    def __call__(self) -> Continue:
        """The same constant, so that ``Continue()`` reads like the bare name."""
        return self


class Nop(Block):
    """Do nothing (a placeholder body, like Python's ``pass``)."""

    __slots__ = ()

    def __call__(self) -> Nop:
        """The same constant, so that ``Nop()`` reads like the bare name."""
        return self


class SuspendPoint(Block):
    """Suspend the program; ``resume(value)`` continues with the next instruction."""

    __slots__ = ("payload", "reason")

    def __init__(self, reason: str, payload: Any = None) -> None:
        if not isinstance(reason, str):
            raise CompileError(f"SUSPEND: the reason must be a string, got {reason!r}")
        self.reason = reason
        self.payload = payload

    def describe(self) -> str:
        """A short readable form of this block."""
        return f"SUSPEND({self.reason!r})"


class Return(Block):
    """Leave the current sub-program (or the program) with a value: a constant or a node."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def describe(self) -> str:
        """A short readable form of this block."""
        return "RETURN"


class Sub(Block):
    """A named sub-program, compiled once and run by ``CALL`` with its own frame.

    Placed in a flow, a SUB only defines the sub-program; it runs nothing there.
    """

    __slots__ = ("body", "name")

    def __init__(self, name: str, body: Block) -> None:
        if not isinstance(name, str) or not name:
            raise CompileError(f"SUB: the name must be a non-empty string, got {name!r}")
        self.name = name
        self.body = body

    def describe(self) -> str:
        """A short readable form of this block."""
        return f"SUB({self.name!r})"


class Call(Block):
    """Run a sub-program; its RETURN value is the CALL's value (usable as a condition)."""

    __slots__ = ("target",)

    def __init__(self, target: Sub | str) -> None:
        if not isinstance(target, Sub | str):
            raise CompileError(f"CALL: expected a SUB or its name, got {target!r}")
        self.target = target

    @property
    def name(self) -> str:
        """The called sub-program's name."""
        return self.target if isinstance(self.target, str) else self.target.name

    def describe(self) -> str:
        """A short readable form of this block."""
        return f"CALL({self.name!r})"


def SUSPEND(reason: str, payload: Any = None) -> SuspendPoint:
    """Suspend here with ``reason`` and a JSON-able ``payload``."""
    return SuspendPoint(reason, payload)


def RETURN(value: Any = None) -> Return:
    """Return ``value``: a constant, a node, or a callable computing it from the context."""
    return Return(value)


def SUB(name: str, body: Any) -> Sub:
    """Define the sub-program ``name``."""
    return Sub(name, _body(body))


def CALL(target: Sub | str) -> Call:
    """Call a sub-program (by object or by name)."""
    return Call(target)


BREAK = Break()
CONTINUE = Continue()
NOP = Nop()
NATIVE_IF = IF
NATIVE_WHILE = WHILE
NATIVE_DO = DO
