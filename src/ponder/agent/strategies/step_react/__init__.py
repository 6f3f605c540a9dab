"""Step-driven ReAct: a plan of steps (a DAG), each run as ReAct rounds, with stall detection.

- `strategy` — `StepReActStrategy`; `program` — `STEP_REACT_BLOCK` and its five nodes
- `plan` / `plan_update` — the plan, its validation, and `update_step`
- `state` — per-step run state; `summary` — step summaries; `stall` — stall detection
- `prompts` — the texts this workflow injects
"""

__all__: list[str] = []
