"""The clients under test: one module each, doing the same work against the loopback server.

Each module has a class with the :class:`Client` interface per kind of work it takes part in:
``QueryClient`` (read a Query page into objects), ``GetItemClient`` and ``PutItemClient``
(sequential single requests, built with ``batch``) and ``PutAllClient`` (write ``items`` items in
BatchWriteItem requests). An entry's ``variant`` prefixes the class name, for a second row from
the same module. Peer libraries are optional (the ``bench`` extra): a client whose package is
missing is reported as skipped, and the others still run.
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
    variant: str = ""


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
    Entry(
        "pynamodb-async",
        "pynamodb_async_client",
        "pynamodb-async Model.query → models",
        "pynamodb_async",
    ),
    Entry("aiodynamo", "aiodynamo_client", "aiodynamo table.query → dicts", "aiodynamo"),
    Entry("pydynox", "pydynox_client", "pydynox Model.query → models", "pydynox"),
    Entry("dynorm", "dynorm_client", "db.get(Order, load=[Order.items]) → attrs", "dynorm"),
)

GET_ITEM: tuple[Entry, ...] = (
    Entry("floor", "floor", "aiohttp POST + orjson, SigV4 signed", "aiohttp"),
    Entry("floor-unsigned", "floor", "aiohttp POST + orjson, no signature", "aiohttp", "Unsigned"),
    Entry("aiobotocore", "aiobotocore_raw", "aiobotocore get_item → raw dict", "aiobotocore"),
    Entry("pynamodb", "pynamodb_client", "PynamoDB Model.get (sync) → model", "pynamodb"),
    Entry(
        "pynamodb-async",
        "pynamodb_async_client",
        "pynamodb-async Model.get → model",
        "pynamodb_async",
    ),
    Entry("aiodynamo", "aiodynamo_client", "aiodynamo table.get_item → dict", "aiodynamo"),
    Entry("pydynox", "pydynox_client", "pydynox Model.get → model", "pydynox"),
    Entry("dynorm", "dynorm_client", "db.get(Order, id=…) → attrs", "dynorm"),
)

PUT_ITEM: tuple[Entry, ...] = (
    Entry("floor", "floor", "aiohttp POST + orjson of a pre-encoded item, signed", "aiohttp"),
    Entry("floor-unsigned", "floor", "aiohttp POST + orjson, no signature", "aiohttp", "Unsigned"),
    Entry(
        "aiobotocore", "aiobotocore_raw", "aiobotocore put_item(pre-encoded item)", "aiobotocore"
    ),
    Entry("pynamodb", "pynamodb_client", "PynamoDB model.save() (sync)", "pynamodb"),
    Entry(
        "pynamodb-async", "pynamodb_async_client", "pynamodb-async model.save()", "pynamodb_async"
    ),
    Entry("aiodynamo", "aiodynamo_client", "aiodynamo table.put_item(dict)", "aiodynamo"),
    Entry("pydynox", "pydynox_client", "pydynox model.save()", "pydynox"),
    Entry("dynorm", "dynorm_client", "db.put(attrs object)", "dynorm"),
)

PUT_ALL: tuple[Entry, ...] = (
    Entry("floor", "floor", "signed BatchWriteItem POSTs of pre-encoded items", "aiohttp"),
    Entry(
        "floor+encode",
        "floor",
        "the floor + a generic plain value → AttributeValue encoder",
        "aiohttp",
        "Encoding",
    ),
    Entry(
        "aiobotocore",
        "aiobotocore_raw",
        "aiobotocore batch_write_item(pre-encoded items)",
        "aiobotocore",
    ),
    Entry(
        "pynamodb", "pynamodb_client", "PynamoDB Model.batch_write() (sync) of models", "pynamodb"
    ),
    Entry(
        "pynamodb-async",
        "pynamodb_async_client",
        "pynamodb-async Model.batch_write() of models",
        "pynamodb_async",
    ),
    Entry("aiodynamo", "aiodynamo_client", "aiodynamo client.batch_write of dicts", "aiodynamo"),
    Entry("pydynox", "pydynox_client", "pydynox BatchWriter of model.to_dict()", "pydynox"),
    Entry("dynorm", "dynorm_client", "db.put_all(attrs objects)", "dynorm"),
)


def load(entry: Entry, kind: str = "QueryClient", **options: int) -> Client | str:
    """An instance of the entry's client, or why it cannot run (its package is missing)."""
    try:
        module = importlib.import_module(f"{__name__}.{entry.module}")
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != entry.package:
            raise
        return f"skipped: {entry.package} is not installed (pip install -e '.[bench]')"
    client: Client = getattr(module, entry.variant + kind)(**options)
    return client
