"""Blocks, sequences and nodes: the pieces every program is made of.

A node is a named sync or async callable taking the run context; ``a >> b`` makes a
sequence. The control-flow constructs built from these live in ``ponder.vm.builder``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, overload

from ponder.exceptions import CompileError

__all__ = ["Block", "BlockLike", "Node", "Seq", "node", "to_block"]

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

    ``blocking=True`` runs a sync callable in a worker thread. ``returns_awaitable=True``
    marks a sync callable whose result is awaited, as an async node's is: a node that only
    hands on to a coroutine (``lambda ctx: ctx.deps.step()``) then keeps no coroutine of its
    own while it waits. ``durable=True`` marks the
    boundary after it as one worth checkpointing (the VM only records the flag; an
    ``after`` hook reads it). ``run`` is what the interpreter calls and ``awaits`` whether
    it awaits the result.
    """

    __slots__ = (
        "awaits",
        "blocking",
        "durable",
        "fn",
        "is_async",
        "name",
        "returns_awaitable",
        "run",
    )

    def __init__(
        self,
        fn: Callable[[Any], Any],
        name: str,
        *,
        blocking: bool = False,
        durable: bool = False,
        returns_awaitable: bool = False,
    ) -> None:
        if not callable(fn):
            raise CompileError(f"node {name!r}: {fn!r} is not callable")
        if not isinstance(name, str) or not name:
            raise CompileError(f"node: a node needs a non-empty string name, got {name!r}")
        self.fn = fn
        self.name = name
        self.is_async = (
            returns_awaitable
            or inspect.iscoroutinefunction(fn)
            or (not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__))
        )
        self.blocking = blocking
        self.durable = durable
        self.returns_awaitable = returns_awaitable
        if blocking and self.is_async:
            raise CompileError(
                f"node {name!r}: blocking=True is for sync callables that return their value"
            )
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
def node(
    fn: Callable[[Any], Any],
    *,
    name: str | None = None,
    blocking: bool = False,
    durable: bool = False,
    returns_awaitable: bool = False,
) -> Node: ...
@overload
def node(
    fn: None = None,
    *,
    name: str | None = None,
    blocking: bool = False,
    durable: bool = False,
    returns_awaitable: bool = False,
) -> Callable[[Callable[[Any], Any]], Node]: ...
def node(
    fn: Callable[[Any], Any] | None = None,
    *,
    name: str | None = None,
    blocking: bool = False,
    durable: bool = False,
    returns_awaitable: bool = False,
) -> Node | Callable[[Callable[[Any], Any]], Node]:
    """Make a node: ``@node``, ``@node(name=..., blocking=..., durable=...)`` or ``node(fn)``."""
    options = {"blocking": blocking, "durable": durable, "returns_awaitable": returns_awaitable}
    if fn is None:
        return lambda f: node(f, name=name, **options)
    if isinstance(fn, Node):  # renamed or re-flagged; a callable's result stays awaited
        options["returns_awaitable"] = returns_awaitable or fn.returns_awaitable
        return Node(fn.fn, fn.name if name is None else name, **options)
    return Node(fn, _default_name(fn) if name is None else name, **options)


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
