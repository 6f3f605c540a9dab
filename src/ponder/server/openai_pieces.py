"""Where a run's events go in an OpenAI chat answer: ``content`` or ``reasoning_content``.

Only the answer's text and the agent's reasoning (summaries, sequential thoughts, reasoning
deltas) go out; every other event kind is named here as staying in ponder.
"""

from __future__ import annotations

from typing import Any, assert_never

from ponder.events import kind_of

__all__ = ["answer_piece", "delta_for", "reasoning_text"]


def reasoning_text(event: dict[str, Any]) -> str:
    """The part of an event that belongs in ``reasoning_content`` ("" for none)."""
    found = answer_piece(event)
    return found[1] if found is not None and found[0] == "reasoning_content" else ""


def answer_piece(event: dict[str, Any]) -> tuple[str, str] | None:
    """Where an event goes in the answer (``content`` or ``reasoning_content``), and what."""
    match kind := kind_of(event):
        case "text_delta":
            return "content", str(event.get("text", ""))
        case "reasoning":
            return "reasoning_content", f"[round {event.get('round')}] {event.get('summary', '')}\n"
        case "thinking":
            data = event.get("data") or {}
            label = f"Thought {data.get('thought_number')}/{data.get('total_thoughts')}"
            return "reasoning_content", f"{label}: {data.get('thought', '')}\n"
        case "reasoning_delta":
            return "reasoning_content", str(event.get("text", ""))
        case (
            "run_started"
            | "run_finished"
            | "run_failed"
            | "run_cancelled"
            | "run_suspended"
            | "run_resumed"
            | "round_started"
            | "usage"
            | "structured_reasoning"
            | "tool_prediction"
            | "tool_call_started"
            | "tool_call_finished"
            | "tool_call_failed"
            | "middle_message"
            | "reflection"
            | "limit_reached"
            | "loop_detected"
            | "stall_detected"
            | "todo"
            | "plan_updated"
            | "step_started"
            | "step_finished"
            | "compaction"
            | "retrieval"
            | "report_raised"
            | "checkpoint_written"
            | "model_degraded"
            | "model_unanswered"
            | "plan_replanned"
            | "mcp_event"
            | "output_partial"
            | "output_rejected"
            | "model_fallback"
            | "sub_agent_event"
            | "answer_withdrawn"
        ):
            return None
        case _:
            assert_never(kind)


def delta_for(event: dict[str, Any]) -> dict[str, Any] | None:
    """The chunk delta an event streams as (``{"content": ...}``), or None."""
    found = answer_piece(event)
    if found is None or not found[1]:
        return None
    return {found[0]: found[1]}
