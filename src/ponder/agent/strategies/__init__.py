"""Strategies: how an agent turns a request into an answer.

- `base` — `AgentStrategy`, the protocol every strategy implements
- `react` — the think–act loop (`ReActStrategy`); `chat` and `rag` — single-pass answers
- `builtins` — the spec's built-in tools (`think_and_reason`, `agent_stop`, ...)
- `report` — the content report guard; `structured_ask` — structured requests with retries
- `prompts` — every text the runtime injects, outside step-react's own
- `step_react/` — the step-driven workflow: plan, updates, steps, stalls, its program
"""

__all__: list[str] = []
