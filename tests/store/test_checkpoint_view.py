"""`StoredRun.view`: a stored run's checkpoint, typed, the same from every store; bad data in
it is a `StoreError` naming the run and the field, never a raw ``KeyError`` or ``TypeError``."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ponder.exceptions import StoreError
from ponder.store import FORMAT, Checkpoint, CheckpointView, Store, Suspension
from tests.store.test_store_errors import approval_agent, execute

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

CALL = {"id": "d1", "name": "deploy", "arguments": {"target": "prod"}}
STATE: dict[str, Any] = {
    "output": "shipped",
    "stop_reason": "answered",
    "output_schema": {"type": "object"},
    "usage": {"requests": 3, "input_tokens": 120, "output_tokens": 7},
    "recipe": {"model": "openai:gpt-4o-mini", "tools": ["deploy"]},
    "tool_states": {"todo": {"items": [{"title": "ship", "status": "done"}]}},
    "event_seq": 41,
}


def full_header(suspension: Any = None, **state: Any) -> dict[str, Any]:
    """A header with every field the view reads, as a checkpoint writes it."""
    vm = {"pc": 3, "suspension": suspension, "state": {**STATE, **state}}
    return {
        "format": FORMAT,
        "vm": vm,
        "ledger": {"length": 0, "generation": 2, "keys": "position"},
    }


async def written(store: Store, status: str, header: dict[str, Any]) -> str:
    run_id = f"view-{uuid.uuid4().hex}"
    await store.write(Checkpoint(run_id, status, header, 0, []))
    return run_id


async def test_every_field_of_the_checkpoint_comes_back_typed(store: Store) -> None:
    suspended = ["approval", {"calls": [CALL]}]
    run_id = await written(store, "suspended", full_header(suspended))
    view = (await store.load(run_id)).view
    assert view == CheckpointView(
        run_id,
        "suspended",
        has_checkpoint=True,
        suspension=Suspension("approval", {"calls": [CALL]}),
        output="shipped",
        stop_reason="answered",
        is_typed=True,
        usage=STATE["usage"],
        recipe=STATE["recipe"],
        tool_states=STATE["tool_states"],
        event_seq=41,
        ledger_generation=2,
        ledger_keys="position",
    )
    assert view.suspension is not None and view.suspension.calls == [CALL]
    assert view.suspension.questions == []
    assert view.suspension.to_dict() == {"reason": "approval", "payload": {"calls": [CALL]}}


async def test_the_view_is_read_only_and_parsed_once(store: Store) -> None:
    stored = await store.load(await written(store, "completed", full_header()))
    assert stored.view is stored.view
    with pytest.raises(TypeError):
        stored.view.recipe["model"] = "other"  # type: ignore[index]
    with pytest.raises(AttributeError):
        stored.view.output = "changed"  # type: ignore[misc]


async def test_a_run_without_a_checkpoint_has_the_defaults(store: Store) -> None:
    run_id = f"fresh-{uuid.uuid4().hex}"
    await store.acquire(run_id, "me", 60.0)
    view = (await store.load(run_id)).view
    assert view == CheckpointView(run_id, "running")
    assert not view.has_checkpoint and view.recipe == {} and view.suspension is None


async def test_only_a_suspended_run_has_a_suspension(store: Store) -> None:
    run_id = await written(store, "completed", full_header(["approval", {"calls": [CALL]}]))
    assert (await store.load(run_id)).view.suspension is None


async def test_a_real_run_reads_back_as_it_ended(store: Store) -> None:
    agent = approval_agent(store)
    waiting = await agent.run("ship it")
    view = (await store.load(waiting.run_id)).view
    assert view.status == waiting.status == "suspended" and view.has_checkpoint
    assert view.suspension is not None and view.suspension.to_dict() == waiting.suspension
    assert [call["id"] for call in view.suspension.calls] == ["d1"]
    assert view.pending_calls == view.suspension.calls and view.pending_questions == []
    done = await agent.resume(waiting.run_id, "approve")
    view = (await store.load(done.run_id)).view
    assert (view.status, view.output, view.stop_reason) == ("completed", done.text, "answered")
    assert view.usage == done.usage.model_dump(exclude_defaults=True)
    assert view.suspension is None and view.event_seq > 0 and not view.is_typed
    assert view.pending_calls == []


BAD_STATES: dict[str, tuple[str, dict[str, Any], str]] = {
    "no vm": ("running", {"format": FORMAT}, "at vm "),
    "state not an object": ("running", full_header(None) | {"vm": {"state": [1]}}, "vm.state "),
    "output a number": ("completed", full_header(output=3), "vm.state.output "),
    "usage a string": ("completed", full_header(usage="lots"), "vm.state.usage "),
    "usage count a string": ("completed", full_header(usage={"requests": "2"}), "usage.requests"),
    "unknown stop reason": ("completed", full_header(stop_reason="bored"), "vm.state.stop_reason"),
    "recipe a list": ("completed", full_header(recipe=["model"]), "vm.state.recipe "),
    "tool states a string": ("completed", full_header(tool_states="x"), "vm.state.tool_states"),
    "event seq a string": ("completed", full_header(event_seq="9"), "vm.state.event_seq"),
    "unknown suspension": ("suspended", full_header(["sleep", {}]), "vm.suspension.0"),
    "suspension a string": ("suspended", full_header("approval"), "vm.suspension "),
    "generation a string": ("running", full_header() | {"ledger": {"generation": "x"}}, "ledger"),
    "unknown status": ("paused", full_header(), "status 'paused' is not one of running"),
    "missing status": ("", full_header(), "has no status"),
}


@pytest.mark.parametrize("damage", sorted(BAD_STATES))
async def test_a_malformed_checkpoint_is_a_store_error_naming_the_run_and_field(
    store: Store, damage: str
) -> None:
    status, header, field = BAD_STATES[damage]
    run_id = await written(store, status, header)
    stored = await store.load(run_id)  # loading checks the format only
    with pytest.raises(StoreError) as caught:
        stored.view  # noqa: B018 - the view is parsed on first use
    message = str(caught.value)
    assert message.startswith(f"run {run_id!r}: ") and field in message, message
    assert "changed by something other than ponder" in message


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"', '{"format": 7}'])
async def test_a_header_that_is_not_a_checkpoint_is_a_store_error(store: Store, text: str) -> None:
    run_id = await written(store, "completed", full_header())
    execute(store, "UPDATE ponder_runs SET header = ? WHERE run_id = ?", text, run_id)
    with pytest.raises(StoreError, match=rf"run {run_id!r}: stored (header|checkpoint)"):
        await store.load(run_id)


def test_the_view_refuses_what_a_store_would_not_hold() -> None:
    with pytest.raises(StoreError, match=r"at the header \(should be a JSON object"):
        CheckpointView.parse("r1", "completed", [1])
