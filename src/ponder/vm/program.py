"""`Program`: the immutable, compiled form of a workflow, with ``dis()`` and a fingerprint."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ponder.vm.builder import Node
from ponder.vm.ops import NODE_OPCODES, ExceptionEntry, Instruction, Opcode

__all__ = ["Program", "RawInstruction"]

RawInstruction = tuple[Opcode, Any, int, tuple[int, int] | None]
"""What the compiler emits: opcode, argument, target label, (handler label, depth)."""

FastInstruction = tuple[Opcode, Any, bool, int]
"""What the interpreter runs: opcode, callable or argument, is-awaitable flag, target."""


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled program: flat instructions, an exception table, named sub-programs.

    ``fingerprint`` hashes the instructions and node names; snapshots carry it so that a
    snapshot is never restored into a different program.
    """

    instructions: tuple[Instruction, ...]
    nodes: tuple[Node, ...]
    exception_table: tuple[ExceptionEntry, ...]
    sub_entries: Mapping[str, int]
    fingerprint: str
    code: tuple[FastInstruction, ...] = field(repr=False)
    handler_at: tuple[tuple[int, int] | None, ...] = field(repr=False)

    @classmethod
    def from_raw(
        cls,
        raw: Sequence[RawInstruction],
        labels: Sequence[int],
        nodes: Sequence[Node],
        sub_entries: Mapping[str, int],
    ) -> Program:
        """Resolve labels to offsets and build the lookup tables."""
        resolved: dict[tuple[int, int] | None, tuple[int, int] | None] = {None: None}
        instructions, code, handler_at = [], [], []
        for offset, (op, arg, target, handler) in enumerate(raw):
            at = labels[target] if target >= 0 else -1
            instructions.append(Instruction(offset, op, arg, at))
            if op in NODE_OPCODES:
                code.append((op, *_callable(arg), at))
            else:
                code.append((op, arg, False, at))
            if handler not in resolved:
                resolved[handler] = (labels[handler[0]], handler[1])  # type: ignore[index]
            handler_at.append(resolved[handler])
        table = _ranges(handler_at)
        return cls(
            instructions=tuple(instructions),
            nodes=tuple(nodes),
            exception_table=table,
            sub_entries=MappingProxyType(dict(sub_entries)),
            fingerprint=_fingerprint(instructions, table),
            code=tuple(code),
            handler_at=tuple(handler_at),
        )

    def node_at(self, pc: int) -> Node | None:
        """The node run by the instruction at ``pc``, if it runs one."""
        if 0 <= pc < len(self.instructions):
            arg = self.instructions[pc].arg
            return arg if isinstance(arg, Node) else None
        return None

    def dis(self) -> str:
        """A listing like CPython's ``dis``: offset, opcode, argument, jump target."""
        targets = {i.target for i in self.instructions if i.target >= 0}
        targets |= {e.handler for e in self.exception_table}
        subs_at = {offset: name for name, offset in self.sub_entries.items()}
        width = len(str(len(self.instructions)))
        lines = [f"program {self.fingerprint[:16]}"]
        for ins in self.instructions:
            if ins.offset in subs_at:
                lines.append(f"\nsub-program {subs_at[ins.offset]!r}:")
            mark = ">>" if ins.offset in targets else "  "
            target = f"(to {ins.target})" if ins.target >= 0 else ""
            text = f"{mark} {ins.offset:>{width}} {ins.opcode.name:<16} {_show(ins):<28} {target}"
            lines.append(text.rstrip())
        if self.exception_table:
            lines.append("\nexception table:")
            for entry in self.exception_table:
                last = entry.end - 1
                lines.append(f"  {entry.start} to {last} -> {entry.handler} [depth {entry.depth}]")
        return "\n".join(lines)

    def __len__(self) -> int:
        return len(self.instructions)


def _callable(node: Node) -> tuple[Any, bool]:
    if node.blocking:
        fn = node.fn
        return functools.partial(_in_thread, fn), True
    return node.fn, node.is_async


async def _in_thread(fn: Any, ctx: Any) -> Any:
    return await asyncio.to_thread(fn, ctx)


def _ranges(handler_at: Sequence[tuple[int, int] | None]) -> tuple[ExceptionEntry, ...]:
    entries: list[ExceptionEntry] = []
    start = 0
    for offset in range(1, len(handler_at) + 1):
        if offset == len(handler_at) or handler_at[offset] != handler_at[start]:
            handler = handler_at[start]
            if handler is not None:
                entries.append(ExceptionEntry(start, offset, handler[0], handler[1]))
            start = offset
    return tuple(entries)


def _show(ins: Instruction) -> str:
    arg = ins.arg
    if arg is None:
        return ""
    if isinstance(arg, Node):
        return arg.name
    if ins.opcode is Opcode.MATCH_EXCEPT:
        return ", ".join(t.__qualname__ for t in arg)
    if ins.opcode is Opcode.CALL_SUB:
        return repr(arg)
    return json.dumps(arg, ensure_ascii=False)


def _encode(ins: Instruction) -> str:
    arg = ins.arg
    if isinstance(arg, Node):
        text = arg.name
    elif ins.opcode is Opcode.MATCH_EXCEPT:
        text = ",".join(f"{t.__module__}.{t.__qualname__}" for t in arg)
    else:
        text = json.dumps(arg, sort_keys=True)
    return f"{ins.opcode.name} {text} {ins.target}"


def _fingerprint(instructions: Sequence[Instruction], table: Sequence[ExceptionEntry]) -> str:
    text = "\n".join(map(_encode, instructions))
    text += "\n" + "\n".join(f"{e.start} {e.end} {e.handler} {e.depth}" for e in table)
    return hashlib.sha256(text.encode()).hexdigest()
