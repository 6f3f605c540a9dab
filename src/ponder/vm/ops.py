"""The instruction set: opcodes, instructions and exception-table entries.

Every jump target and exception handler is an instruction offset fixed at compile time.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NamedTuple

__all__ = ["NODE_OPCODES", "ExceptionEntry", "Instruction", "Opcode"]


class Opcode(IntEnum):
    """What one instruction does."""

    NOP = 0
    CALL = 1  # run node `arg`
    BRANCH_TRUE = 2  # run node `arg`; jump to `target` if its value is truthy
    BRANCH_FALSE = 3  # run node `arg`; jump to `target` if its value is falsy
    JUMP = 4  # jump to `target`
    JUMP_IF_TRUE = 5  # jump to `target` if the current value (a CALL_SUB result) is truthy
    JUMP_IF_FALSE = 6  # jump to `target` if the current value is falsy
    SUSPEND = 7  # suspend with `arg` = (reason, payload); resume continues at the next one
    SET_RETURN = 8  # the frame's return value becomes the constant `arg`
    SET_RETURN_NODE = 9  # the frame's return value becomes the value of node `arg`
    RETURN = 10  # leave the frame with its return value (the program, in the main frame)
    CALL_SUB = 11  # push a frame and jump to sub-program `arg` at `target`
    MATCH_EXCEPT = 12  # if the handled exception is not an instance of `arg`, jump to `target`
    POP_EXCEPT = 13  # the innermost handled exception is done with
    RERAISE = 14  # raise the innermost handled exception again


NODE_OPCODES = frozenset(
    {Opcode.CALL, Opcode.BRANCH_TRUE, Opcode.BRANCH_FALSE, Opcode.SET_RETURN_NODE}
)
"""Opcodes that run a node (and so run the before/after hooks)."""


class Instruction(NamedTuple):
    """One instruction: its offset, opcode, argument and resolved jump target (or -1)."""

    offset: int
    opcode: Opcode
    arg: Any
    target: int


class ExceptionEntry(NamedTuple):
    """Exceptions raised at offsets ``start`` ≤ pc < ``end`` go to ``handler``.

    Before the handler runs, the frame's stack of handled exceptions is cut to ``depth``.
    """

    start: int
    end: int
    handler: int
    depth: int
