"""The machinery of one run: context, state, driver, checkpointer, acting, approval, programs.

Users rarely import from here; `Agent` drives it. The modules:

- `context` — `RunContext`, what nodes reach the run through
- `state` — `RunState`, the run's plain, serialisable data
- `driver` — starts, resumes and finishes a run on the interpreter
- `checkpointer` — writes checkpoints and tool effects to a store
- `acting` / `approval` — running a round's tool calls, and pausing them for a decision
- `compaction` — keeping the context inside the model's window
- `nodes` / `workflows` — the spec's workflow nodes and the programs built from them
"""

__all__: list[str] = []
