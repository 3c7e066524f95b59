"""The clients under test: one module each, all reading the same Query page.

Each module has a ``QueryClient`` (and the two compared per request a ``GetItemClient``) with the
:class:`Client` interface. Peer libraries are optional (the ``bench`` extra): a client whose
package is missing is reported as skipped, and the others still run.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

#: Fake credentials: the loopback server checks no signature, but the clients insist on signing.
ACCESS_KEY = "bench"
SECRET_KEY = "bench-secret"  # noqa: S105 - not a secret
REGION = "us-east-1"


class Client(Protocol):
    """One client's way of doing the measured work against the loopback server."""

    async def setup(self, url: str) -> None:
        """Connect to the server at ``url`` (and warm nothing up: the harness does)."""

    async def run_once(self) -> int:
        """Do the work once; return how many units (items, requests) it produced."""

    async def teardown(self) -> None:
        """Close connections."""


@dataclass(frozen=True)
class Entry:
    """A client in the table: its row name, module, what it does, and the package it needs."""

    name: str
    module: str
    label: str
    package: str


QUERY: tuple[Entry, ...] = (
    Entry("floor", "floor", "aiohttp POST + orjson.loads, nothing else", "aiohttp"),
    Entry("aiobotocore", "aiobotocore_raw", "aiobotocore query → raw dicts", "aiobotocore"),
    Entry(
        "aiobotocore+deser",
        "aiobotocore_typedeser",
        "aiobotocore query + boto3 TypeDeserializer",
        "boto3",
    ),
    Entry("pynamodb", "pynamodb_client", "PynamoDB Model.query (sync) → models", "pynamodb"),
    Entry("aiodynamo", "aiodynamo_client", "aiodynamo table.query → dicts", "aiodynamo"),
    Entry("dynorm", "dynorm_client", "db.get(Order, load=[Order.items]) → attrs", "dynorm"),
)

GET_ITEM: tuple[Entry, ...] = (
    Entry("aiobotocore", "aiobotocore_raw", "aiobotocore get_item → raw dict", "aiobotocore"),
    Entry("dynorm", "dynorm_client", "db.get(Order, id=…) → attrs", "dynorm"),
)


def load(entry: Entry, kind: str = "QueryClient", **options: int) -> Client | str:
    """An instance of the entry's client, or why it cannot run (its package is missing)."""
    try:
        module = importlib.import_module(f"{__name__}.{entry.module}")
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != entry.package:
            raise
        return f"skipped: {entry.package} is not installed (pip install -e '.[bench]')"
    client: Client = getattr(module, kind)(**options)
    return client
