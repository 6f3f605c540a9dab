"""`Program`: the immutable, compiled form of a workflow, with ``dis()`` and a fingerprint."""

from __future__ import annotations

import array
import functools
import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ponder.vm.nodes import Node
from ponder.vm.ops import ExceptionEntry, Instruction, Opcode

__all__ = ["Assembly", "Program"]

HandlerLabel = tuple[int, int] | None
"""Where an exception at an instruction goes: (handler label, depth), or nowhere."""

FastInstruction = tuple[Opcode, Any, bool, int]
"""What the interpreter runs: opcode, callable or argument, is-awaitable flag, target."""


@dataclass(eq=False)
class Assembly:
    """Instructions as the compiler emits them: parallel lists, targets still labels."""

    opcodes: list[Opcode] = field(default_factory=list)
    args: list[Any] = field(default_factory=list)
    runs: list[Any] = field(default_factory=list)
    awaits: list[bool] = field(default_factory=list)
    targets: list[int] = field(default_factory=list)
    handlers: list[HandlerLabel] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    jumps: list[int] = field(default_factory=list)  # offsets whose target is a label

    def emit(self, op: Opcode, arg: Any, target: int, handler: HandlerLabel) -> None:
        """Append an instruction that runs no node."""
        if target >= 0:
            self.jumps.append(len(self.opcodes))
        self.opcodes.append(op)
        self.args.append(arg)
        self.runs.append(arg)
        self.awaits.append(False)
        self.targets.append(target)
        self.handlers.append(handler)

    def emit_node(self, op: Opcode, node: Node, target: int, handler: HandlerLabel) -> None:
        """Append an instruction that runs ``node``."""
        if target >= 0:
            self.jumps.append(len(self.opcodes))
        self.opcodes.append(op)
        self.args.append(node)
        self.runs.append(node.run)
        self.awaits.append(node.awaits)
        self.targets.append(target)
        self.handlers.append(handler)

    def emit_nodes(self, op: Opcode, nodes: Sequence[Node], handler: HandlerLabel) -> None:
        """Append one instruction per node, all with opcode ``op`` and no target."""
        count = len(nodes)
        self.opcodes.extend(itertools.repeat(op, count))
        self.args.extend(nodes)
        self.runs.extend([n.run for n in nodes])
        self.awaits.extend([n.awaits for n in nodes])
        self.targets.extend(itertools.repeat(-1, count))
        self.handlers.extend(itertools.repeat(handler, count))

    def label(self) -> int:
        """A new label, placed later with ``place``."""
        self.labels.append(-1)
        return len(self.labels) - 1

    def place(self, label: int) -> None:
        """Put ``label`` at the next instruction."""
        self.labels[label] = len(self.opcodes)

    def __len__(self) -> int:
        return len(self.opcodes)


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled program: flat instructions, an exception table, named sub-programs.

    ``fingerprint`` hashes the instructions and node names; snapshots carry it so that a
    snapshot is never restored into a different program.
    """

    opcodes: tuple[Opcode, ...]
    args: tuple[Any, ...]
    targets: tuple[int, ...]
    nodes: tuple[Node, ...]
    exception_table: tuple[ExceptionEntry, ...]
    sub_entries: Mapping[str, int]
    fingerprint: str
    code: tuple[FastInstruction, ...] = field(repr=False)
    handler_at: tuple[tuple[int, int] | None, ...] = field(repr=False)

    @classmethod
    def from_assembly(
        cls, asm: Assembly, nodes: Sequence[Node], sub_entries: Mapping[str, int]
    ) -> Program:
        """Resolve labels to offsets and build the lookup tables."""
        labels, resolved_targets = asm.labels, list(asm.targets)
        for offset in asm.jumps:
            resolved_targets[offset] = labels[resolved_targets[offset]]
        targets = tuple(resolved_targets)
        code = tuple(zip(asm.opcodes, asm.runs, asm.awaits, targets, strict=True))
        resolved: dict[Any, tuple[int, int] | None] = {None: None}
        resolved.update((h, (labels[h[0]], h[1])) for h in set(asm.handlers) if h is not None)
        handler_at = tuple(map(resolved.__getitem__, asm.handlers))
        table = _ranges(handler_at)
        opcodes, args = tuple(asm.opcodes), tuple(asm.args)
        return cls(
            opcodes=opcodes,
            args=args,
            targets=targets,
            nodes=tuple(nodes),
            exception_table=table,
            sub_entries=MappingProxyType(dict(sub_entries)),
            fingerprint=_fingerprint(opcodes, args, targets, table),
            code=code,
            handler_at=handler_at,
        )

    @functools.cached_property
    def instructions(self) -> tuple[Instruction, ...]:
        """The instructions, in offset order."""
        return tuple(
            Instruction(offset, *parts)
            for offset, parts in enumerate(zip(self.opcodes, self.args, self.targets, strict=True))
        )

    def node_at(self, pc: int) -> Node | None:
        """The node run by the instruction at ``pc``, if it runs one."""
        if 0 <= pc < len(self.args):
            arg = self.args[pc]
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
        return len(self.opcodes)


def _ranges(handler_at: Sequence[tuple[int, int] | None]) -> tuple[ExceptionEntry, ...]:
    entries: list[ExceptionEntry] = []
    start = 0
    for handler, group in itertools.groupby(handler_at):
        end = start + len(list(group))
        if handler is not None:
            entries.append(ExceptionEntry(start, end, handler[0], handler[1]))
        start = end
    return tuple(entries)


def _show(ins: Instruction) -> str:
    arg = ins.arg
    if ins.opcode is Opcode.SET_RETURN:
        return json.dumps(arg, ensure_ascii=False)
    if arg is None:
        return ""
    if isinstance(arg, Node):
        return arg.name
    if ins.opcode is Opcode.MATCH_EXCEPT:
        return ", ".join(t.__qualname__ for t in arg)
    if ins.opcode is Opcode.CALL_SUB:
        return repr(arg)
    return json.dumps(arg, ensure_ascii=False)


def _encode(op: Opcode, arg: Any) -> str:
    if op is Opcode.MATCH_EXCEPT:
        return ",".join(f"{t.__module__}:{t.__qualname__}" for t in arg)
    return json.dumps(arg, sort_keys=True)


def _fingerprint(
    opcodes: Sequence[Opcode],
    args: Sequence[Any],
    targets: Sequence[int],
    table: Sequence[ExceptionEntry],
) -> str:
    digest = hashlib.sha256(bytes(opcodes))
    digest.update(array.array("q", targets).tobytes())
    texts = [
        arg.name if type(arg) is Node else _encode(op, arg)
        for op, arg in zip(opcodes, args, strict=True)
    ]
    digest.update("\x00".join(texts).encode())
    digest.update(repr([tuple(entry) for entry in table]).encode())
    return digest.hexdigest()
