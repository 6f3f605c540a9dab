"""The run state of an interpreter as plain data, and its JSON snapshot format.

Loops need no runtime stack (their jumps are resolved at compile time); what a snapshot
holds is the pc, the frame stack (return offsets, pending return values and the
exceptions being handled in each frame), the suspension, and the user state.
"""

from __future__ import annotations

import builtins
import importlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from ponder.exceptions import SnapshotError

__all__ = [
    "SNAPSHOT_FORMAT",
    "ExceptionRecord",
    "Finished",
    "Frame",
    "FrameRecord",
    "Handled",
    "Outcome",
    "RestoredException",
    "SnapshotRecord",
    "Status",
    "Suspended",
    "from_exception_record",
    "to_exception_record",
    "to_json_value",
]

SNAPSHOT_FORMAT: Literal["ponder.vm.snapshot/1"] = "ponder.vm.snapshot/1"
Status = Literal["ready", "suspended", "failed", "finished"]


@dataclass(frozen=True, slots=True)
class Finished:
    """The program ended; ``value`` is what RETURN gave (None if it ran off the end)."""

    value: Any = None
    kind: Literal["finished"] = "finished"


@dataclass(frozen=True, slots=True)
class Suspended:
    """The program is suspended; ``resume(value)`` continues it."""

    reason: str
    payload: Any = None
    kind: Literal["suspended"] = "suspended"


Outcome = Finished | Suspended


@dataclass(slots=True)
class Handled:
    """An exception being handled, with the pc it was first raised at."""

    exception: BaseException
    origin: int


@dataclass(slots=True)
class Frame:
    """One activation: where to return to, its pending return value, its handled exceptions."""

    return_pc: int
    handled: tuple[Handled, ...] = ()
    """Innermost last; a tuple, so the common frame that handles nothing holds no list."""
    return_value: Any = None


class RestoredException(Exception):
    """Stands in for a restored exception whose type cannot be rebuilt in this process."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExceptionRecord(_Record):
    """An exception as data: its type (``module:qualname``), args, message and origin pc."""

    type: str
    args: list[Any]
    message: str
    origin: int


class FrameRecord(_Record):
    """A frame as data."""

    return_pc: int
    return_value: Any = None
    handled: list[ExceptionRecord] = Field(default_factory=list)


class SnapshotRecord(_Record):
    """The whole snapshot; ``model_dump(mode="json")`` is what ``snapshot()`` returns."""

    format: Literal["ponder.vm.snapshot/1"] = SNAPSHOT_FORMAT
    fingerprint: str
    status: Status
    pc: int = Field(ge=0)
    frames: list[FrameRecord]
    value: Any = None
    suspension: tuple[str, Any] | None = None
    result: Any = None
    error: ExceptionRecord | None = None
    state_type: str
    state: dict[str, Any]


_ATOMS = (str, int, float, bool, type(None))


def to_json_value(value: Any, what: str) -> Any:
    """``value`` as JSON data, else a SnapshotError naming ``what``.

    The data is what pydantic's JSON mode makes of it (tuples become lists, ...).
    """
    if type(value) in _ATOMS:
        return value
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise SnapshotError(
            f"cannot snapshot {what}: {type(value).__name__} is not JSON-serialisable ({exc})"
        ) from None
    return to_jsonable_python(value)


def to_exception_record(exc: BaseException, origin: int) -> ExceptionRecord:
    """An exception as data; args that are not JSON-able are replaced by the message."""
    kind = type(exc)
    if isinstance(exc, RestoredException):
        type_name = exc.type_name
    else:
        type_name = f"{kind.__module__}:{kind.__qualname__}"
    args: list[Any] = list(exc.args)
    try:
        json.dumps(args)
    except (TypeError, ValueError):
        args = [str(exc)]
    return ExceptionRecord(type=type_name, args=args, message=str(exc), origin=origin)


def from_exception_record(record: ExceptionRecord) -> BaseException:
    """Rebuild the exception; a type that cannot be imported or built becomes RestoredException."""
    kind = _import_exception_type(record.type)
    if kind is not None:
        try:
            return kind(*record.args)
        except Exception:
            pass
    return RestoredException(record.type, record.message)


def _import_exception_type(path: str) -> type[BaseException] | None:
    module_name, _, qualname = path.partition(":")
    if module_name == "builtins":
        found = getattr(builtins, qualname, None)
    else:
        try:
            found = importlib.import_module(module_name)
        except ImportError:
            return None
        for part in qualname.split("."):
            found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None
