"""The instruction VM: write workflows with combinators, compile them, run and snapshot them.

```python
program = compile_program(init >> WHILE(more).ACTION(step >> IF(done, BREAK)) >> finish)
vm = Interpreter(program, state)
outcome = await vm.run()          # Finished(value) | Suspended(reason, payload)
blob = vm.snapshot()              # JSON-able; Interpreter.restore(program, blob, ...) resumes
```
"""

from ponder.vm.builder import (
    BREAK,
    CALL,
    CONTINUE,
    DO,
    IF,
    NATIVE_DO,
    NATIVE_IF,
    NATIVE_WHILE,
    NOP,
    RETURN,
    SUB,
    SUSPEND,
    TRY,
    WHILE,
    Sub,
)
from ponder.vm.compiler import compile_program
from ponder.vm.interpreter import Interpreter, NodeContext
from ponder.vm.nodes import Block, Node, Seq, node
from ponder.vm.ops import ExceptionEntry, Instruction, Opcode
from ponder.vm.program import Program
from ponder.vm.state import Finished, Outcome, RestoredException, Suspended

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
    "ExceptionEntry",
    "Finished",
    "Instruction",
    "Interpreter",
    "Node",
    "NodeContext",
    "Opcode",
    "Outcome",
    "Program",
    "RestoredException",
    "Seq",
    "Sub",
    "Suspended",
    "compile_program",
    "node",
]
