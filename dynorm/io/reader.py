"""What the io layer's reading code needs of a Database: a way to send, and to make objects.

Loaders and ``load=`` are written against this, not against ``Database``, so they can sit below
it. ``io/reads.py``'s ``Reads`` implements it (``db.get``, ``db.query`` and ``db.load`` hand it
to the loading code); objects are bound to it (a Database's ``db.reads``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec
from dynorm.core.requests import CollectionRead, Request
from dynorm.mapping.model import ModelInfo, ModelTable
from dynorm.mapping.state import InstanceState

__all__ = ["Reader"]

T = TypeVar("T")


class Reader(Protocol):
    """What loaders need from a Database: a way to send, and a way to turn items into objects."""

    def name_of(self, table: ModelTable) -> str:
        """The name ``table`` has on the connection (its own, or the one connect() gave)."""
        ...

    @property
    def cursors(self) -> CursorCodec:
        """Makes and checks the cursors of relationship pages."""
        ...

    def send(self, request: Request, /) -> Awaitable[dict[str, Any]]:
        """Send one request (positional: a plain ``Sender`` of ``io/paging.py`` is one)."""
        ...

    def acceptor(self, info: ModelInfo[T], index: str | None) -> Callable[[Item], T | None]: ...

    def fetch(
        self, keys: Sequence[Item], *, consistent: bool = False, table: ModelTable | None = None
    ) -> Awaitable[dict[Any, Item]]:
        """Raw items for primary keys of ``table``, by ``key_id`` (BatchGetItem)."""
        ...

    def fetch_named(
        self, keys: Sequence[tuple[str, Item]], *, consistent: bool = False
    ) -> Awaitable[dict[tuple[str, Any], Item]]:
        """Raw items for (table name, key) pairs of any tables, by (name, ``key_id``)."""
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
