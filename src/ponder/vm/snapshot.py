"""Snapshot an interpreter to a JSON-able dict and restore it, refusing other programs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ponder.exceptions import SnapshotError
from ponder.vm.ops import Opcode
from ponder.vm.state import (
    SNAPSHOT_FORMAT,
    Finished,
    Frame,
    Handled,
    SnapshotRecord,
    Suspended,
    from_exception_record,
    to_exception_record,
    to_json_value,
)

if TYPE_CHECKING:
    from ponder.vm.interpreter import Interpreter

__all__ = ["restore_snapshot", "take_snapshot"]


def take_snapshot(vm: Interpreter) -> dict[str, Any]:
    """The interpreter's whole state as plain JSON data (the shape of `SnapshotRecord`)."""
    state = vm.state
    if not isinstance(state, BaseModel):
        raise SnapshotError(
            f"cannot snapshot: the state {type(state).__name__} is not a pydantic model"
        )
    suspension, error = vm.suspension, vm.error
    # built as the dict SnapshotRecord.model_dump(mode="json") would give, without the model:
    # every part is checked here (and restore validates the whole)
    return {
        "format": SNAPSHOT_FORMAT,
        "fingerprint": vm.program.fingerprint,
        "status": vm.status,
        "pc": vm.pc,
        "frames": [_frame_record(frame, depth) for depth, frame in enumerate(vm.frames)],
        "value": _current_value(vm),
        "suspension": None
        if suspension is None
        else [suspension.reason, to_json_value(suspension.payload, "the suspension payload")],
        "result": None if vm.result is None else to_json_value(vm.result.value, "the result"),
        "error": None
        if error is None
        else to_exception_record(error.exception, error.origin).model_dump(mode="json"),
        "state_type": f"{type(state).__module__}:{type(state).__qualname__}",
        "state": state.model_dump(mode="json", exclude_defaults=True),
    }


def _frame_record(frame: Frame, depth: int) -> dict[str, Any]:
    return {
        "return_pc": frame.return_pc,
        "return_value": to_json_value(
            frame.return_value, f"the pending return value of frame {depth}"
        ),
        "handled": [
            to_exception_record(h.exception, h.origin).model_dump(mode="json")
            for h in frame.handled
        ],
    }


def _current_value(vm: Interpreter) -> Any:
    """The current value, which must be plain data only when the next instruction tests it."""
    tested = vm.program.opcodes[vm.pc] in (Opcode.JUMP_IF_TRUE, Opcode.JUMP_IF_FALSE)
    try:
        return to_json_value(vm.value, "the current value (a CALL's value about to be tested)")
    except SnapshotError:
        if tested:
            raise
        return None


def restore_snapshot(vm: Interpreter, snapshot: Any, state_type: type[Any] | None) -> None:
    """Load ``snapshot`` into the fresh interpreter ``vm``."""
    record = _parse(snapshot)
    program = vm.program
    if record.fingerprint != program.fingerprint:
        raise SnapshotError(
            f"the snapshot was taken from program {record.fingerprint[:16]}, not from this "
            f"program {program.fingerprint[:16]}; restore it with the program it was taken from"
        )
    _check_offsets(record, len(program.instructions))
    kind = state_type or _import_state_type(record.state_type)
    try:
        vm.state = kind.model_validate(record.state)
    except ValidationError as exc:
        raise SnapshotError(
            f"the snapshot's state does not validate as {kind.__name__}: {exc}"
        ) from exc
    vm.ctx.state = vm.state
    vm.pc, vm.status, vm.value = record.pc, record.status, record.value
    vm.frames = [
        Frame(f.return_pc, tuple(_handled(h) for h in f.handled), f.return_value)
        for f in record.frames
    ]
    if record.suspension is not None:
        vm.suspension = Suspended(*record.suspension)
    if record.status == "finished":
        vm.result = Finished(record.result)
    if record.error is not None:
        vm.error = _handled(record.error)


def _parse(snapshot: Any) -> SnapshotRecord:
    if not isinstance(snapshot, dict):
        raise SnapshotError(f"a snapshot is a dict, got {type(snapshot).__name__}")
    if snapshot.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(
            f"unknown snapshot format {snapshot.get('format')!r}; expected {SNAPSHOT_FORMAT!r}"
        )
    try:
        return SnapshotRecord.model_validate(snapshot)
    except ValidationError as exc:
        raise SnapshotError(f"malformed snapshot: {exc}") from exc


def _check_offsets(record: SnapshotRecord, size: int) -> None:
    if record.pc >= size:
        raise SnapshotError(
            f"malformed snapshot: pc {record.pc} is outside the program (size {size})"
        )
    if not record.frames and record.status != "finished":
        raise SnapshotError("malformed snapshot: no frames in a run that has not finished")
    for frame in record.frames[1:]:
        if not 0 < frame.return_pc < size:
            raise SnapshotError(
                f"malformed snapshot: return pc {frame.return_pc} is outside the program"
            )


def _handled(record: Any) -> Handled:
    return Handled(from_exception_record(record), record.origin)


def _import_state_type(path: str) -> type[BaseModel]:
    module_name, _, qualname = path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise SnapshotError(f"cannot import the state type {path!r}; pass state_type=...") from exc
    if not (isinstance(found, type) and issubclass(found, BaseModel)):
        raise SnapshotError(f"the state type {path!r} is not a pydantic model; pass state_type=...")
    return found
