"""The combinators programs are written with: IF, WHILE, DO, TRY, BREAK, RETURN, SUB, CALL.

Everything here only *describes* a program; :func:`ponder.vm.compile_program` turns the
description into flat instructions and reports malformed ones as ``CompileError``.
"""

from __future__ import annotations

from typing import Any

from ponder.exceptions import CompileError
from ponder.vm.nodes import Block, Node, Seq, node, to_block

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
]


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
