"""Finding the program ``ponder dis`` disassembles: a workflow by name, or ``module:attr``."""

from __future__ import annotations

from typing import Any

from ponder.agent.strategies.workflows import WORKFLOWS
from ponder.cli.options import import_attribute
from ponder.exceptions import UserError
from ponder.vm import Program, compile_program

__all__ = ["load_program"]


def load_program(target: str) -> Any:
    """The `Program` named by ``target``: a built-in workflow, or a Program or block to compile."""
    return _program_of(_load_target(target), target)


def _load_target(target: str) -> Any:
    if target in WORKFLOWS:
        return WORKFLOWS[target][0]
    if ":" not in target:
        names = ", ".join(WORKFLOWS)
        raise UserError(f"cannot disassemble {target!r}: give {names} or module:attribute")
    return import_attribute(target, "program")


def _program_of(value: Any, target: str) -> Any:
    if isinstance(value, Program):
        return value
    try:
        return compile_program(value)
    except Exception as error:
        raise UserError(f"{target!r} is not a Program or a block ({error})") from None
