"""Agent configuration: one frozen pydantic model with the spec's key names, and loaders.

``AgentConfig`` is flat so that ``AgentConfig(agent_tool_call_limit=5)`` reads naturally.
``load_config`` reads ``ponder.toml`` (keys at the top level or under ``[agent]``) or the
existing bot's ``config.toml`` in either of its layouts (see `ponder.config.bot`), then
applies ``PONDER_<KEY>`` environment overrides. Unknown keys and keys without effect warn;
invalid values raise ``ConfigError`` naming the key and the allowed values. There is no
global config.
"""

from __future__ import annotations

import difflib
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ponder.config.bot import closest_key, flatten_document
from ponder.exceptions import ConfigError

__all__ = ["DEFAULT_THOUGHT_MODE", "AgentConfig", "ConfigWarning", "load_config"]

ThoughtMode = Literal["reasoning-required", "reasoning", "inline", "reasoning-optional", "chat"]
DEFAULT_THOUGHT_MODE: ThoughtMode = "reasoning-required"
"""The thought mode of a run whose config and provider profile name none."""
ToolCallingMode = Literal["agent", "rag", "none"]
StrategyName = Literal["react", "no-action", "hybrid-react"]
WorkflowName = Literal["react", "step-react"]
ReportLevel = Literal["low", "medium", "high"]
ContextStrategy = Literal["compact", "slide", "none"]
StallAction = Literal["replan", "skip", "abandon"]


_MIN_SUMMARY_TOKENS = 64


class ConfigWarning(UserWarning):
    """A configuration file holds a key ponder does not know."""


class AgentConfig(BaseModel):
    """Everything that shapes a run. Frozen: a run never changes its agent's config."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True
    )

    # [llm]
    agent_strategy: StrategyName = "react"
    """How a turn runs: ``react`` (think-act loop), ``no-action`` (a plain chat answer);
    ``hybrid-react`` is deprecated and runs ``react``."""
    agent_workflow: WorkflowName = "react"
    """``react``: one loop of rounds; ``step-react``: plan a DAG of steps first, then run them."""
    model: str | None = None
    """The model string, e.g. ``openai:gpt-4o-mini`` or ``anthropic:claude-3-5-haiku-latest``."""
    instructions: str = ""
    """The system prompt's own part (``--instructions`` wins)."""
    base_url: str | None = None
    """The provider's API address (an OpenAI-compatible server, a proxy)."""
    api_key: str | None = None
    """The provider's key; the environment's (``OPENAI_API_KEY``, ...) when unset."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens one model response may use; the provider's default when unset."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature sent with every request; the provider's default when unset."""
    llm_timeout: float = Field(default=60.0, gt=0)
    """Seconds the model may stay silent (between stream chunks, or before a whole answer)."""
    llm_total_timeout: float = Field(default=600.0, gt=0)
    """Seconds one model request may take in total, retries included."""
    model_capabilities: dict[str, bool] = Field(default_factory=dict)
    """Overrides of the provider profile's capabilities, e.g. ``{required_tool_choice = false}``."""
    max_retries: int = Field(default=3, ge=0)
    """Retries of a failed model request (rate limits, 5xx, timeouts); one model call sends
    at most ``1 + max_retries`` requests, downgraded re-sends and fallback models included."""
    session_tokens_windows: int = Field(default=65536, ge=1)
    """The context window in tokens that compaction keeps the run under."""
    memory_length_limit: int = Field(default=200, ge=0)
    """Messages that trigger compaction; 0 turns the message-count trigger off."""
    enable_compaction: bool = True
    """Summarise or drop old messages when the window fills (see ``context_strategy``)."""
    context_strategy: ContextStrategy = "compact"
    """``compact`` (summarise old messages), ``slide`` (drop them) or ``none``."""
    compaction_trigger_ratio: float = Field(default=0.9, gt=0, le=1)
    """Compact once this fraction of ``session_tokens_windows`` is used."""
    compaction_max_tokens: int = Field(default=2048, ge=0)
    """The size of a compaction summary in tokens; 0: the model's ``max_tokens``."""
    slide_target_ratio: float | None = Field(default=None, gt=0, le=1)
    """``slide`` keeps this fraction of the window (default: half the trigger)."""

    # [llm.tools]
    enable_report: bool = False
    """Run the content report guard on the user's message before any work."""
    report_invoke_level: ReportLevel = "medium"
    """How strict the report guard is."""
    report_block_message: str | tuple[str, ...] = "Sorry, I can't help with that request."
    """The answer when the guard blocks; with several, one is picked at random."""
    report_exclude_system_prompt: bool = False
    """The report guard does not see the instructions."""
    report_exclude_context: bool = False
    """The report guard does not see the earlier conversation."""
    report_then_block: bool = True
    """Block the turn when flagged (else the event is emitted and the run goes on)."""

    # [core.function_config]
    agent_tool_call_limit: int = Field(default=10, ge=1)
    """Tool rounds a turn may take; past them the model answers without tools."""
    agent_max_tool_calls: int | None = Field(default=None, ge=1)
    """Tool calls a turn may make in total (unlimited when unset)."""
    agent_tool_refusal_rounds: int = Field(default=2, ge=1)
    """Past a limit, answers that still call tools are refused this often, then the turn closes."""
    answer_keeps_results: bool | None = None
    """An answer that mentions none of the tools' short results gets them listed after it.

    Unset: on for the local servers' profiles (small models), off elsewhere."""
    agent_middle_message: bool = True
    """Offer ``processing_message``: progress notes to the user."""
    agent_mcp_client_enable: bool = False
    """Connect to the MCP servers of ``agent_mcp_server_scripts``."""
    agent_mcp_server_scripts: tuple[str | dict[str, Any], ...] = ()
    """MCP servers: stdio commands, ``http(s)://`` or ``sse://`` addresses, or tables."""
    use_minimal_context: bool = False
    """Send only the turn's own messages, not the earlier conversation."""
    agent_step_token_budget: int = -1
    """step-react: input tokens one step may use before it is closed (-1: no budget)."""
    tool_timeout: float = Field(default=60.0, gt=0)
    """Seconds a tool call may take unless the tool sets its own timeout."""
    tool_output_max_chars: int = Field(default=20000, ge=100)
    """Longer tool results are cut to this many characters."""

    # [core.builtin]
    tool_calling_mode: ToolCallingMode = "agent"
    """``agent`` (tools in a loop), ``rag`` (one retrieval, then the answer) or ``none``."""
    agent_thought_mode: ThoughtMode | None = None
    """When ``think_and_reason`` is forced: every round, the first round, offered only, or
    never; unset, the model's provider profile chooses (``reasoning-required`` for most)."""
    loop_reasoning_trigger: int = Field(default=5, ge=1)
    """Repeated rounds tolerated before the loop guard corrects the model."""
    stall_action: StallAction = "replan"
    """step-react: what a stalled step does (``replan``, ``skip`` or ``abandon``)."""
    step_iteration_limit: int = Field(default=8, ge=1)
    """step-react: rounds one step may take."""
    structured_output_retries: int = Field(default=2, ge=0, le=5)
    """Retries when a structured answer does not match its schema."""
    rag_index_path: str | None = None
    """The folder whose index RAG mode answers from (``ponder index``)."""
    rag_top_k: int = Field(default=4, ge=1, le=50)
    """Chunks one retrieval returns."""

    # [core.builtin.react_config]
    structured_reasoning: bool = False
    """Reasoning in ``[Step N/M] [phase]`` form (``structured_reasoning`` events)."""
    reasoning_depth: int = Field(default=3, ge=1, le=10)
    """Steps a structured reasoning may plan."""
    enable_reflection: bool = False
    """Offer ``verify_reasoning``: check the reasoning before the answer."""
    reflection_depth: int = Field(default=1, ge=1, le=5)
    """Reflection rounds before the answer."""
    tool_prediction: bool = False
    """Predict the tools the next action needs (needs ``structured_reasoning``)."""

    # ponder's own
    enable_thinking_tool: bool = True
    """Offer ``sequential_thinking``, the thinking tree."""
    enable_todo_tool: bool = False
    """Offer ``todo_write``, a task list the model keeps."""
    thought_max_chars: int = Field(default=2000, ge=100)
    """Longest thought ``sequential_thinking`` accepts."""
    thinking_branch_contents: bool = True
    """``sequential_thinking`` results carry each branch's thoughts (``branch_contents``)."""
    thinking_branch_contents_max_chars: int = Field(default=8000, ge=0)
    """Cap on the thought text in ``branch_contents``; the newest thoughts are kept."""
    mcp_sampling_limit: int = Field(default=5, ge=0)
    """MCP sampling requests one run answers at most (0 = sampling not offered)."""
    mcp_sampling_model: str | None = None
    """The model that answers MCP sampling requests; None = the agent's own model."""
    mcp_roots: tuple[str, ...] = ()
    """Directories (or ``file://`` URIs) offered to MCP servers as roots."""

    @field_validator("compaction_max_tokens")
    @classmethod
    def _summary_budget(cls, value: int) -> int:
        if 0 < value < _MIN_SUMMARY_TOKENS:
            least = _MIN_SUMMARY_TOKENS
            raise ValueError(f"expected 0 (the model's max_tokens) or at least {least}")
        return value

    @field_validator("agent_mcp_server_scripts", "report_block_message", "mcp_roots", mode="before")
    @classmethod
    def _lists_as_tuples(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @field_validator("report_block_message")
    @classmethod
    def _some_block_message(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        if isinstance(value, tuple) and not value:
            raise ValueError("give at least one message")
        return value

    @model_validator(mode="after")
    def _slide_below_trigger(self) -> AgentConfig:
        ratio = self.slide_target_ratio
        if ratio is not None and ratio >= self.compaction_trigger_ratio:
            raise ValueError(
                f"slide_target_ratio ({ratio}) must be below compaction_trigger_ratio "
                f"({self.compaction_trigger_ratio}), or every request slides again"
            )
        return self

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> AgentConfig:
        """Validate a flat mapping, turning pydantic errors into ``ConfigError``."""
        known = {k: v for k, v in values.items() if k in cls.model_fields}
        for key in sorted(values.keys() - known.keys()):
            warnings.warn(
                f"unknown configuration key {key!r} ignored{closest_key(key, cls.model_fields)}",
                ConfigWarning,
                stacklevel=3,
            )
        try:
            return cls(**known)
        except ValidationError as exc:
            raise _config_error(exc) from None

    def replace(self, **changes: Any) -> AgentConfig:
        """A copy with some keys changed (validated)."""
        return AgentConfig.from_mapping({**self.model_dump(), **changes})


def _config_error(exc: ValidationError) -> ConfigError:
    first = exc.errors()[0]
    named = [name for name in AgentConfig.model_fields if name in first["msg"]]
    by_position = min(named, key=first["msg"].index) if named else "config"
    key = ".".join(str(p) for p in first["loc"]) or by_position
    allowed = _allowed_values(key)
    hint = f" (allowed: {allowed})" if allowed else ""
    return ConfigError(key, f"{first['msg']}, got {first.get('input')!r}{hint}")


def _allowed_values(key: str) -> str:
    field = AgentConfig.model_fields.get(key.split(".")[0])
    args = getattr(field.annotation, "__args__", ()) if field else ()
    # an optional choice (``Literal[...] | None``) lists the literal's values
    args = next((getattr(a, "__args__", ()) for a in args if get_origin(a) is Literal), args)
    literals = [a for a in args if isinstance(a, str)]
    return ", ".join(literals)


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for key in AgentConfig.model_fields:
        raw = environ.get(f"PONDER_{key.upper()}")
        if raw is not None:
            overrides[key] = _parse_env_value(raw)
    _warn_misspelt_variables(environ)
    return overrides


def _warn_misspelt_variables(environ: Mapping[str, str]) -> None:
    """Warn about a ``PONDER_*`` variable that is a near miss of a configuration key's.

    Other ``PONDER_*`` variables (``PONDER_STORE``, ...) are not configuration keys and
    are left alone.
    """
    variables = {f"PONDER_{key.upper()}" for key in AgentConfig.model_fields}
    for name in sorted(environ):
        if not name.startswith("PONDER_") or name in variables:
            continue
        close = difflib.get_close_matches(name, variables, n=1, cutoff=0.9)
        if close:
            message = f"environment variable {name} ignored: did you mean {close[0]}?"
            warnings.warn_explicit(message, ConfigWarning, name, 0, module="ponder.config")


def _parse_env_value(raw: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def load_config(
    path: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> AgentConfig:
    """Load a config file (either layout), then env overrides, then keyword overrides."""
    values: dict[str, Any] = {}
    if path is not None:
        values.update(_read_toml(Path(path)))
    values.update(_env_overrides(os.environ if environ is None else environ))
    values.update(overrides)
    return AgentConfig.from_mapping(values)


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the config file: {exc.strerror}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from None
    values, notes = flatten_document(document, AgentConfig.model_fields)
    for key in sorted(values.keys() - AgentConfig.model_fields.keys()):
        del values[key]
        suggestion = closest_key(key, AgentConfig.model_fields)
        notes.append(f"unknown configuration key {key!r} ignored{suggestion}")
    lines = text.splitlines()
    for note in notes:
        # the warning points at the user's file and line, not at ponder's code
        line = _line_of(lines, note)
        where = f"{path}:{line}" if line else str(path)
        warnings.warn_explicit(f"{where}: {note}", ConfigWarning, str(path), line or 1)
    return values


_WORD = re.compile(r"[A-Za-z_][\w.]*")


def _line_of(lines: list[str], note: str) -> int:
    """The 1-based line that sets a key ``note`` names, else its table (0: none found)."""
    keys = [re.escape(word.rsplit(".", 1)[-1]) for word in _WORD.findall(note)]
    patterns = [rf"^\s*(['\"]?){key}\1\s*=" for key in keys]
    patterns += [rf"^\s*\[+[^\]]*\b{key}\]" for key in keys]
    for pattern in map(re.compile, patterns):
        found = next((n for n, text in enumerate(lines, 1) if pattern.match(text)), 0)
        if found:
            return found
    return 0
