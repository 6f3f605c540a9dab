"""One shared, read-only ``__pydantic_fields_set__`` per set of field names.

pydantic gives every model instance its own ``set`` of the fields it was built with. A
ledger keeps its messages for the whole run, and thousands of waiting runs keep thousands
of such sets alive: each is a 216-byte object that the cyclic collector walks on every
full collection. A message in a ledger is frozen, so its fields set never changes; the
ledger swaps it for a shared `SharedFieldsSet` holding the same names.

Nothing observable changes: ``model_fields_set`` holds the same names, and a copy
(``model_copy``, ``copy.copy``, ``copy.deepcopy``) gets a fresh, mutable ``set``, which
pydantic then updates as it always does.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = [
    "CopyOnWriteFields",
    "SharedFieldsModel",
    "SharedFieldsSet",
    "built",
    "share_fields_set",
    "shared_fields_set",
]


class SharedFieldsSet(set[str]):
    """The fields set shared by models built with the same fields; read-only.

    A ``set`` (pydantic's serializer requires one), whose mutators refuse. Copying it gives
    a plain ``set``: pydantic copies a model's fields set, then adds the updated names to
    the copy.
    """

    __slots__ = ()

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        return set, (list(self),)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a shared fields set is read-only; copy it to change it")

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse


_SHARED: dict[frozenset[str], SharedFieldsSet] = {}
"""One set per combination of field names (a bounded number: names of model fields)."""
_LATEST: dict[type[BaseModel], SharedFieldsSet] = {}
"""The set last shared per model class: most instances of a class set the same fields."""


def shared_fields_set(names: Iterable[str]) -> SharedFieldsSet:
    """The shared set of ``names``, for a model built around pydantic (`model_construct`)."""
    key = frozenset(names)
    return _SHARED.setdefault(key, SharedFieldsSet(key))


M = TypeVar("M", bound=BaseModel)
_new = object.__new__
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
"""BaseModel's own slot setters: faster than ``object.__setattr__``, which looks each up."""


def built(cls: type[M], values: dict[str, Any], fields: set[str]) -> M:
    """A ``cls`` holding ``values`` as they are, the way `model_construct` builds one.

    For ponder's own hot paths only, where every value is already of its field's type
    (taken from validated models, or made there): validating it again cost about a
    microsecond a message. ``values`` holds every field, in declaration order, and
    ``fields`` the names a validated build would have recorded: a `SharedFieldsSet` for a
    model whose fields set never grows (see `share_fields_set`), else a set of its own.
    """
    model = _new(cls)
    _set_dict(model, values)
    _set_fields(model, fields)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def share_fields_set(model: BaseModel) -> None:
    """Give ``model`` the shared fields set with its names.

    Only for a model whose fields set never grows (a frozen one, or one whose assignments
    bypass it: `RunState`), or a `CopyOnWriteFields`, which copies it before it grows.
    """
    fields: AbstractSet[str] = model.__pydantic_fields_set__
    if type(fields) is SharedFieldsSet:
        return
    cls = type(model)
    shared = _LATEST.get(cls)
    if shared is None or shared != fields:
        key = frozenset(fields)
        shared = _SHARED.get(key)
        if shared is None:
            shared = shared_fields_set(key)
        _LATEST[cls] = shared
    object.__setattr__(model, "__pydantic_fields_set__", shared)


class CopyOnWriteFields(BaseModel):
    """A mutable model whose shared fields set is copied at its first assignment.

    `share_fields_set` may give it a shared set wherever it is built (`Usage` sums); the
    first assignment gives the instance its own copy, which pydantic then updates as it
    always does.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        """Assign as pydantic does, into a fields set of the instance's own."""
        if type(self.__pydantic_fields_set__) is SharedFieldsSet:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


class SharedFieldsModel(CopyOnWriteFields):
    """A mutable model built with a shared fields set, copied at its first assignment.

    For models that every run builds and few assign to (a chat run's unused step-workflow
    state). Sharing at construction costs a ``model_post_init`` call per instance, so a
    model built many times a run (`Usage`) shares only where it is built instead.
    """

    def model_post_init(self, context: Any, /) -> None:
        """Share the fields set (see ``shared_fields``)."""
        share_fields_set(self)
