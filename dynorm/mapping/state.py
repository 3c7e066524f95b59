"""Per-instance state kept beside model objects: which Database they came from, what was loaded.

Models stay plain attrs classes (``attrs.asdict`` shows data fields only), so the state lives in a
side table keyed by ``id(obj)`` and is dropped by a weak-reference callback when the object dies.
Only models that declare relationships ever get an entry.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec
from dynorm.core.requests import CollectionRead, Request

if TYPE_CHECKING:
    from dynorm.io.query import Query

    from .model import ModelInfo

__all__ = ["InstanceState", "Loaded", "Session", "bind", "held_items", "state_of"]

T = TypeVar("T")
V = TypeVar("V")


class Session(Protocol):
    """What loaders need from a Database: a way to send, and a way to turn items into objects."""

    table_name: str

    @property
    def cursors(self) -> CursorCodec:
        """Makes and checks the cursors of relationship pages."""
        ...

    def send(self, request: Request) -> Awaitable[dict[str, Any]]: ...

    def acceptor(self, info: ModelInfo[T], index: str | None) -> Callable[[Item], T | None]: ...

    def query_collection(self, info: ModelInfo[T], read: CollectionRead) -> Query[T]:
        """The lazy Query of ``info``'s items in ``read``."""
        ...

    def fetch(
        self, keys: Sequence[Item], *, consistent: bool = False
    ) -> Awaitable[dict[Any, Item]]:
        """Raw items for primary keys, by ``key_id`` (BatchGetItem)."""
        ...

    def adopt(self, info: ModelInfo[Any], obj: object, item: Item) -> InstanceState:
        """Bind an object decoded from ``item`` and keep the children embedded in it."""
        ...

    def read_page(
        self,
        read: CollectionRead,
        accept: Callable[[Item], T | None],
        *,
        limit: int | None,
        start: Item | None,
        on_page: Callable[[list[Item]], None] | None = None,
        ahead: int = 0,
    ) -> Awaitable[tuple[list[T], Item | None]]:
        """Up to ``limit`` accepted items after ``start``, and the key to resume from."""
        ...

    def iterate(
        self, read: CollectionRead, accept: Callable[[Item], T | None], *, start: Item | None = None
    ) -> AsyncIterator[T]:
        """Every accepted item from ``start`` on, page by page (the next page prefetched)."""
        ...


@attrs.define
class Loaded:
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


@attrs.define
class InstanceState:
    session: Session | None = None
    loaded: dict[str, Loaded] = attrs.field(factory=dict)


_states: dict[int, tuple[weakref.ref[Any], InstanceState]] = {}


def state_of(obj: object) -> InstanceState | None:
    """The state of an object read or written through a Database, else None."""
    entry = _states.get(id(obj))
    if entry is not None and entry[0]() is obj:
        return entry[1]
    return None


def bind(obj: object, session: Session) -> InstanceState:
    """Attach ``obj`` to the session that read or wrote it, so its loaders can send requests."""
    key = id(obj)
    entry = _states.get(key)
    if entry is not None and entry[0]() is obj:
        entry[1].session = session
        return entry[1]
    state = InstanceState(session)
    _states[key] = (weakref.ref(obj, lambda _ref: _states.pop(key, None)), state)
    return state


def held_items(obj: object, name: str) -> list[Any] | None:
    """Every child loaded for relationship ``name`` (``.loaded`` may show fewer), or None."""
    state = state_of(obj)
    loaded = None if state is None else state.loaded.get(name)
    return None if loaded is None else list(loaded.items)
