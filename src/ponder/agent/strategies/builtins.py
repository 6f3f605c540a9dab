"""What the built-in tools do to a run: reasoning, progress messages, stop, verification.

Their definitions (wire names, schemas) are in ``ponder.tools.builtin``. Here each call's
arguments are checked like any tool's — a malformed call gets an error result naming the
field — and its effect is applied to the run state, with its event.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, get_args

from ponder.agent.strategies import prompts
from ponder.config import AgentConfig
from ponder.events import (
    CheckType,
    MiddleMessage,
    Reasoning,
    ReasoningPhase,
    Reflection,
    StructuredReasoning,
    ToolPrediction,
    Verdict,
)
from ponder.messages import ToolCallPart
from ponder.models.base import ToolDefinition
from ponder.tools import builtin
from ponder.tools.arguments import ArgumentError, ArgumentIssue, parse_arguments_lenient
from ponder.tools.coerce import describe_value
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = [
    "Builtins",
    "builtin_definitions",
    "parse_structured_reasoning",
    "parse_tool_prediction",
]

_STEP = re.compile(
    r"\[Step\s+(\d+)\s*/\s*(\d+)\]\s*\[(analy[sz]e|plan|execute|verify)\]\s*(.*)", re.IGNORECASE
)
_PREDICTION = re.compile(r"\[TOOL_PREDICTION\]\s*(.*)", re.IGNORECASE | re.DOTALL)
CHECK_TYPES: tuple[CheckType, ...] = get_args(CheckType)
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
_PHASES: dict[str, ReasoningPhase] = {
    "analyze": "analyze",
    "analyse": "analyze",
    "plan": "plan",
    "execute": "execute",
    "verify": "verify",
}
C = TypeVar("C", bound=str)
_ALL_BLOCKS = 1000


def parse_structured_reasoning(text: str, depth: int) -> list[tuple[int, int, ReasoningPhase, str]]:
    """``[Step N/M] [phase] sub-problem`` blocks, at most ``depth`` of them."""
    blocks = []
    for line in text.splitlines():
        match = _STEP.search(line)
        if match:
            index, total, phase, rest = match.groups()
            blocks.append((int(index), int(total), _PHASES[phase.lower()], rest.strip()))
    return blocks[:depth]


def parse_tool_prediction(text: str) -> tuple[list[str], str] | None:
    """``[TOOL_PREDICTION] a, b -> next action`` → (tools, next action)."""
    match = _PREDICTION.search(text)
    if not match:
        return None
    body = match.group(1).strip().splitlines()[0] if match.group(1).strip() else ""
    names, _, action = body.partition("->")
    tools = [n.strip() for n in re.split(r"[,\s]+", names) if n.strip()]
    return tools, action.strip()


def _string(args: dict[str, Any], name: str, *, required: bool, issues: list[ArgumentIssue]) -> str:
    value = args.get(name)
    if value is None:
        if required:
            issues.append(ArgumentIssue(name, "missing (expected a non-empty string)"))
        return ""
    if not isinstance(value, str):
        issues.append(ArgumentIssue(name, f"expected a string, received {describe_value(value)}"))
        return ""
    if required and not value.strip():
        issues.append(ArgumentIssue(name, "must not be empty"))
    return value.strip()


def _choice(
    args: dict[str, Any], name: str, allowed: tuple[C, ...], issues: list[ArgumentIssue]
) -> C:
    value = args.get(name)
    if isinstance(value, str):
        for choice in allowed:
            if value.strip().lower() == choice:
                return choice
    expected = " | ".join(allowed)
    received = "missing" if value is None else f"received {describe_value(value)}"
    issues.append(ArgumentIssue(name, f"expected one of {expected}, {received}"))
    return allowed[0]


_DefinitionsKey = tuple[bool, str, bool, bool]
_definitions: dict[_DefinitionsKey, Mapping[str, ToolDefinition]] = {}


def builtin_definitions(config: AgentConfig) -> Mapping[str, ToolDefinition]:
    """The built-in tools ``config`` enables, by name: read-only, one per distinct set.

    Each run of an agent holds the same mapping, so a waiting run keeps no copy of it.
    """
    guidance = prompts.structured_guidance(config)
    key = (
        config.agent_thought_mode != "chat",
        guidance,
        config.agent_middle_message,
        config.enable_reflection,
    )
    found = _definitions.get(key)
    if found is None:
        made: dict[str, ToolDefinition] = {}
        if key[0]:
            made[builtin.THINK_AND_REASON] = builtin.think_and_reason_definition(guidance)
        if config.agent_middle_message:
            made[builtin.PROCESSING_MESSAGE] = builtin.processing_message_definition()
        made[builtin.AGENT_STOP] = builtin.agent_stop_definition()
        if config.enable_reflection:
            made[builtin.VERIFY_REASONING] = builtin.verify_reasoning_definition()
        found = _definitions[key] = MappingProxyType(made)
    return found


class Builtins:
    """The built-in tools enabled for one run, and their effects."""

    __slots__ = ("ctx", "definitions")

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.definitions: Mapping[str, ToolDefinition] = builtin_definitions(ctx.config)
        """Shared by the runs of one configuration: replaced, never changed in place."""

    def __contains__(self, name: object) -> bool:
        return name in self.definitions

    async def handle(self, call: ToolCallPart, round_no: int) -> ToolResult:
        """Apply one built-in call; malformed arguments give an error result."""
        try:
            args = call.args if call.args is not None else parse_arguments_lenient(call.arguments)
            issues: list[ArgumentIssue] = []
            result = await self.dispatch(call.name, args, issues, round_no)
            if issues:
                raise ArgumentError(issues)
        except ArgumentError as error:
            return ToolResult.fail(error.for_model(call.name))
        return result

    async def dispatch(
        self, name: str, args: dict[str, Any], issues: list[ArgumentIssue], round_no: int
    ) -> ToolResult:
        """Apply the built-in ``name``; subclasses add their own built-ins here."""
        if name == builtin.THINK_AND_REASON:
            return await self._think(args, issues, round_no)
        if name == builtin.PROCESSING_MESSAGE:
            content = _string(args, "content", required=True, issues=issues)
            if not issues:
                await self.ctx.bus.emit(MiddleMessage(content=content))
            return ToolResult.ok(f"Sent a message to user: {content}")
        if name == builtin.AGENT_STOP:
            return self._stop(args, issues)
        return await self._verify(args, issues)

    async def _think(
        self, args: dict[str, Any], issues: list[ArgumentIssue], round_no: int
    ) -> ToolResult:
        summary = _string(args, "summary", required=True, issues=issues)
        last_step = _string(args, "last_step", required=False, issues=issues)
        if issues:
            return ToolResult.fail("invalid")
        state = self.ctx.state
        state.last_summary, state.last_step = summary, last_step
        await self.ctx.bus.emit(Reasoning(round=round_no, last_step=last_step, summary=summary))
        dropped = await self.emit_structured(summary)
        return ToolResult.ok(prompts.REASONING_RECORDED + dropped)

    async def emit_structured(self, summary: str) -> str:
        """Emit the structured-reasoning and tool-prediction events ``summary`` carries.

        Returns a note for the model when it wrote more ``[Step]`` blocks than
        ``reasoning_depth`` (those beyond it are not recorded), else ``""``.
        """
        config = self.ctx.config
        if not config.structured_reasoning:
            return ""
        blocks = parse_structured_reasoning(summary, _ALL_BLOCKS)
        depth = config.reasoning_depth
        for index, total, phase, sub in blocks[:depth]:
            await self.ctx.bus.emit(
                StructuredReasoning(
                    step_index=index, total_steps=total, phase=phase, sub_problem=sub
                )
            )
        prediction = parse_tool_prediction(summary) if config.tool_prediction else None
        if prediction:
            await self.ctx.bus.emit(
                ToolPrediction(predicted_tools=prediction[0], predicted_next_action=prediction[1])
            )
        if len(blocks) <= depth:
            return ""
        return (
            f"\nNote: {depth} of {len(blocks)} [Step] blocks were recorded; reasoning_depth is "
            f"{depth}, so write at most {depth}."
        )

    def _stop(self, args: dict[str, Any], issues: list[ArgumentIssue]) -> ToolResult:
        result = _string(args, "result", required=False, issues=issues)
        if issues:
            return ToolResult.fail("invalid")
        state = self.ctx.state
        state.suggested_stop = True
        state.stop_result = result
        if self.reflection_pending:
            return ToolResult.ok("Stop acknowledged. Your reasoning will be verified first.")
        return ToolResult.ok(prompts.FINAL_ANSWER_INSTRUCTION)

    @property
    def reflection_pending(self) -> bool:
        """True when a stop must be verified before the final answer."""
        state, config = self.ctx.state, self.ctx.config
        return (
            config.enable_reflection
            and state.suggested_stop
            and state.reflection_attempts < config.reflection_depth
        )

    async def _verify(self, args: dict[str, Any], issues: list[ArgumentIssue]) -> ToolResult:
        check_type = _choice(args, "check_type", CHECK_TYPES, issues)
        verdict = _choice(args, "result", VERDICTS, issues)
        detail = _string(args, "detail", required=False, issues=issues)
        if issues:
            return ToolResult.fail("invalid")
        state = self.ctx.state
        state.reflection_verdicts = (*state.reflection_verdicts, verdict)
        state.reflection_checks[check_type] = (verdict, detail)
        await self.ctx.bus.emit(
            Reflection(
                check_type=check_type,
                result=verdict,
                detail=detail,
                attempt=self.ctx.state.reflection_attempts,
            )
        )
        return ToolResult.ok(f"Verification recorded: {verdict}.")
