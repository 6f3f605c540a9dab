"""The machinery of one run: context, state, driver, checkpointer, acting, approval, programs.

Users rarely import from here; `Agent` drives it. The modules:

- `context` — `RunContext`, the live side of a run (model, tools, hooks, events)
- `state` — `RunState`, the run's plain, serialisable data
- `driver` — builds the checkpointer and the strategy; starts, resumes and finishes a run
- `checkpointer` — writes checkpoints and tool effects to a store
- `acting` — running a round's tool calls, and finishing a batch a crash interrupted
- `approval` — all of approval: suspending on calls, checking and applying the decision
- `compaction` — keeping the context inside the model's window
- `nodes` / `workflows` — the spec's workflow nodes (given `RunDeps`) and the programs
"""

__all__: list[str] = []
