"""The state of one thinking scope and the two-phase step that records a thought.

`plan_thought` reads the state and computes everything a call will change (the entry,
its revision target, a new branch, warnings or refusals) without touching it;
`commit_thought` applies a plan in one synchronous step. A refused call therefore changes
nothing, and with no ``await`` between the two phases a call is atomic on the event loop.

Revisions: ``is_revision`` with ``revises_thought = n`` targets the latest recorded thought
numbered ``n``. ``revision_type`` ``replace`` (the default) marks it superseded by the new
thought; ``amend`` records the new thought as an amendment and leaves it current.
Branches: a thought with ``branch_from_thought`` and a non-empty ``branch_id`` is filed
under that id (ids kept in first-seen order) and is in the main history too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ponder.tools.thinking_schema import RevisionType, ThinkingConfig, ThoughtInput

__all__ = ["ThinkingState", "ThoughtEntry", "ThoughtPlan", "commit_thought", "plan_thought"]


class ThoughtEntry(BaseModel):
    """One recorded thought; ``seq`` is its 1-based position among accepted calls."""

    model_config = ConfigDict(frozen=True)

    seq: int
    thought: str
    thought_number: int
    total_thoughts: int
    """The total after raising it to ``thought_number``."""
    next_thought_needed: bool
    needs_more_thoughts: bool = False
    is_revision: bool = False
    revises_thought: int | None = None
    revision_type: RevisionType | None = None
    branch_from_thought: int | None = None
    branch_id: str | None = None


class ThinkingState(BaseModel):
    """History, branches and revision marks of one scope (one run or MCP session)."""

    history: list[ThoughtEntry] = Field(default_factory=list)
    """Thoughts in call order, branch thoughts included; the oldest beyond the cap dropped."""
    branches: dict[str, list[int]] = Field(default_factory=dict)
    """Branch id → seqs of its thoughts, ids in first-seen order."""
    superseded: dict[int, int] = Field(default_factory=dict)
    """seq of a replaced thought → seq of the revision that replaced it."""
    amendments: dict[int, list[int]] = Field(default_factory=dict)
    """seq of an amended thought → seqs of the revisions that amend it."""
    recorded: int = 0
    """Thoughts accepted in this scope, dropped ones included."""

    def entry(self, seq: int) -> ThoughtEntry | None:
        """The retained entry with this seq, if any."""
        if not self.history:
            return None
        index = seq - self.history[0].seq
        return self.history[index] if 0 <= index < len(self.history) else None

    def current_view(self) -> list[ThoughtEntry]:
        """The retained thoughts that no later revision replaced."""
        return [e for e in self.history if e.seq not in self.superseded]

    def branch_contents(self) -> dict[str, list[dict[str, object]]]:
        """Each branch's retained thoughts as ``{thought_number, thought}``."""
        return self.branch_contents_within(None)[0]

    def branch_contents_within(
        self, max_chars: int | None
    ) -> tuple[dict[str, list[dict[str, object]]], int]:
        """`branch_contents` with at most ``max_chars`` of thought text, and how many left out.

        The newest thoughts are kept; ``None`` keeps them all.
        """
        seqs = sorted((s for ids in self.branches.values() for s in ids), reverse=True)
        entries = [e for e in map(self.entry, seqs) if e is not None]
        kept: set[int] = set()
        budget = max_chars
        for entry in entries:
            if budget is not None:
                if len(entry.thought) > budget:
                    break
                budget -= len(entry.thought)
            kept.add(entry.seq)
        contents: dict[str, list[dict[str, object]]] = {}
        for branch_id, ids in self.branches.items():
            contents[branch_id] = [
                {"thought_number": e.thought_number, "thought": e.thought}
                for e in map(self.entry, ids)
                if e is not None and e.seq in kept
            ]
        return contents, len(entries) - len(kept)

    def clear(self) -> None:
        """Forget everything recorded in this scope."""
        self.history.clear()
        self.branches.clear()
        self.superseded.clear()
        self.amendments.clear()
        self.recorded = 0


@dataclass(slots=True)
class ThoughtPlan:
    """Everything an accepted call will change, computed before any change."""

    entry: ThoughtEntry
    revision_target: int | None = None
    """seq of the thought this one revises, when it was found."""
    warnings: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    """Reasons the call must be refused; a plan with refusals is never committed."""


def _latest_numbered(state: ThinkingState, number: int) -> ThoughtEntry | None:
    for entry in reversed(state.history):
        if entry.thought_number == number:
            return entry
    return None


def _numbering_warnings(state: ThinkingState, given: ThoughtInput) -> list[str]:
    """Gaps, repeats and backward moves against the previous thought (never errors).

    The first thought of a scope may start anywhere: a model may continue a numbering it
    began before the scope did (for example, before its context was compacted).
    """
    if not state.history:
        return []
    last = state.history[-1].thought_number
    number = given.thought_number
    if number > last + 1:
        missing = f"{last + 1}" if number == last + 2 else f"{last + 1}-{number - 1}"
        return [f"thought_number jumps from {last} to {number}: thought(s) {missing} missing"]
    if number <= last and not given.is_revision:
        return [
            f"thought_number {number} does not follow the previous thought ({last}); "
            f"number thoughts consecutively ({last + 1} next)"
        ]
    return []


def _revision_issues(state: ThinkingState, given: ThoughtInput) -> tuple[list[str], int | None]:
    """Cross-field problems of the revision fields, and the seq of the revised thought."""
    issues: list[str] = []
    target = None
    if given.is_revision and given.revises_thought is None:
        issues.append("is_revision is true but revises_thought is missing")
    if given.revises_thought is not None and not given.is_revision:
        issues.append("revises_thought is set but is_revision is not true")
    if given.revision_type is not None and not given.is_revision:
        issues.append("revision_type is set but is_revision is not true")
    if given.is_revision and given.revises_thought is not None:
        found = _latest_numbered(state, given.revises_thought)
        if found is None:
            issues.append(f"revises_thought {given.revises_thought} is not a recorded thought")
        else:
            target = found.seq
        if given.revises_thought >= given.thought_number:
            issues.append(
                f"revises_thought {given.revises_thought} should be earlier than "
                f"thought_number {given.thought_number}"
            )
    return issues, target


def _branch_issues(state: ThinkingState, given: ThoughtInput) -> list[str]:
    issues: list[str] = []
    if given.branch_id is not None and given.branch_from_thought is None:
        issues.append("branch_id is set but branch_from_thought is missing; not filed as a branch")
    if given.branch_from_thought is not None:
        if given.branch_id is None:
            issues.append("branch_from_thought is set but branch_id is missing or empty")
        if _latest_numbered(state, given.branch_from_thought) is None:
            issues.append(
                f"branch_from_thought {given.branch_from_thought} is not a recorded thought"
            )
        if given.branch_from_thought >= given.thought_number:
            issues.append(
                f"branch_from_thought {given.branch_from_thought} should be earlier than "
                f"thought_number {given.thought_number}"
            )
    return issues


def _new_entry(state: ThinkingState, given: ThoughtInput) -> ThoughtEntry:
    return ThoughtEntry(
        seq=state.recorded + 1,
        thought=given.thought,
        thought_number=given.thought_number,
        total_thoughts=max(given.total_thoughts, given.thought_number),
        next_thought_needed=given.next_thought_needed,
        needs_more_thoughts=given.needs_more_thoughts,
        is_revision=given.is_revision,
        revises_thought=given.revises_thought,
        revision_type=(given.revision_type or "replace") if given.is_revision else None,
        branch_from_thought=given.branch_from_thought,
        branch_id=given.branch_id,
    )


def plan_thought(state: ThinkingState, config: ThinkingConfig, given: ThoughtInput) -> ThoughtPlan:
    """Compute what recording ``given`` would change; ``state`` is only read."""
    revision_issues, target = _revision_issues(state, given)
    cross_field = revision_issues + _branch_issues(state, given)
    plan = ThoughtPlan(entry=_new_entry(state, given), revision_target=target)
    if config.strict:
        plan.refusals += cross_field
    else:
        plan.warnings += cross_field
    plan.warnings += _numbering_warnings(state, given)
    plan.warnings += [f"ignored unknown field {key!r}" for key in given.ignored_keys]
    is_branch = given.branch_from_thought is not None and given.branch_id is not None
    if is_branch and given.branch_id not in state.branches:
        if len(state.branches) >= config.max_branches:
            plan.refusals.append(
                f"too many branches (at most {config.max_branches}); continue an existing "
                "branch_id or the main line"
            )
    if len(state.history) >= config.max_history:
        plan.warnings.append(
            f"history is full ({config.max_history} thoughts): the oldest thought was dropped"
        )
    return plan


def commit_thought(state: ThinkingState, config: ThinkingConfig, plan: ThoughtPlan) -> None:
    """Apply an accepted plan to ``state`` (synchronous: nothing can interleave)."""
    if plan.refusals:
        raise ValueError("a refused plan cannot be committed")
    entry = plan.entry
    state.history.append(entry)
    state.recorded = entry.seq
    if entry.branch_from_thought is not None and entry.branch_id is not None:
        state.branches.setdefault(entry.branch_id, []).append(entry.seq)
    if plan.revision_target is not None:
        if entry.revision_type == "amend":
            state.amendments.setdefault(plan.revision_target, []).append(entry.seq)
        else:
            state.superseded[plan.revision_target] = entry.seq
    while len(state.history) > config.max_history:
        _drop_oldest(state)


def _drop_oldest(state: ThinkingState) -> None:
    dropped = state.history.pop(0).seq
    state.superseded.pop(dropped, None)
    state.amendments.pop(dropped, None)
    for seqs in state.branches.values():
        if seqs and seqs[0] == dropped:
            seqs.pop(0)
