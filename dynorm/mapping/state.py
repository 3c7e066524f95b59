"""Per-instance state kept beside model objects: the reads they are bound to, what was loaded.

An object is bound to the reads of the Database that read or wrote it (``db.reads``).

Models stay plain attrs classes (``attrs.asdict`` shows data fields only), so the state lives in a
side table keyed by ``id(obj)`` and is dropped by a weak-reference callback when the object dies.
Only models that declare relationships ever get an entry.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, TypeVar

import msgspec

from dynorm.core.codec.converter import Item

__all__ = ["InstanceState", "Loaded", "bind", "held_items", "state_of"]

T = TypeVar("T")
V = TypeVar("V")


class Loaded(msgspec.Struct):
    """Children that came with a load, and where to resume reading the rest.

    ``resume`` is None when the load reached the end of the children; otherwise the key to start
    after (an empty dict means "from the first child").
    """

    items: list[Any]
    resume: Item | None
    #: The relationship that read ``items`` when it differs from the declared one (a per-call
    #: ``.using(...)`` override): ``resume`` is a position in *its* read, so the rest of the
    #: children must be read the same way.
    read_by: Any = None
    #: How many of ``items`` a limited load shows as ``.loaded`` (embedded children all arrive
    #: with the parent and stay whole, since writes of the parent carry every one of them).
    shown: int | None = None
    #: A sharded relationship's :class:`~dynorm.mapping.sharded.Position` after the last child
    #: loaded (None: none was), the rest read from there; ``resume`` is then ``{}`` while more
    #: may follow, None once every shard was read to its end.
    position: Any = None
    #: Whether the call that made the object asked for these children (``load=``, ``db.load``,
    #: ``from_jsonable``). Embedded children come inside every read of the parent item, asked
    #: for or not: they are kept (``.loaded``, writes of the parent), but ``jsonable`` shows a
    #: relationship only when asked for, so its JSON does not depend on its strategy.
    asked: bool = True


class InstanceState(msgspec.Struct):
    #: The Database the object was read or written through (``io/reader.py`` says what the io
    #: layer reads through it); the mapping layer only keeps it.
    database: object | None = None
    loaded: dict[str, Loaded] = msgspec.field(default_factory=dict)


_states: dict[int, tuple[weakref.ref[Any], InstanceState]] = {}


def state_of(obj: object) -> InstanceState | None:
    """The state of an object read or written through a Database, else None."""
    entry = _states.get(id(obj))
    if entry is not None and entry[0]() is obj:
        return entry[1]
    return None


def _forget(states: dict[int, Any], key: int, _ref: object) -> None:
    states.pop(key, None)


def bind(obj: object, database: object) -> InstanceState:
    """Attach ``obj`` to ``database``: the reads (``db.reads``) that read or wrote it."""
    key = id(obj)
    entry = _states.get(key)
    if entry is not None and entry[0]() is obj:
        entry[1].database = database
        return entry[1]
    state = InstanceState(database)
    # The dict is bound into the callback: objects that die while the interpreter shuts down
    # (module globals already None) must not raise from it.
    forget = functools.partial(_forget, _states, key)
    _states[key] = (weakref.ref(obj, forget), state)
    return state


def held_items(obj: object, name: str) -> list[Any] | None:
    """Every child loaded for relationship ``name`` (``.loaded`` may show fewer), or None."""
    state = state_of(obj)
    loaded = None if state is None else state.loaded.get(name)
    return None if loaded is None else list(loaded.items)
