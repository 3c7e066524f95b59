"""One cold start, run as a script in a fresh process: ``python coldstart_child.py WHAT [URL]``.

``WHAT`` is ``import:<module>[,<module>…]`` (time importing the modules alone) or a library's
name (import it, declare 20 models, connect to the loopback server at ``URL``, get one item and
decode it into its model). It prints one JSON line: ``import_ms`` (the import, measured here),
``first_item_ns`` (``time.time_ns()`` once the item is decoded: the parent subtracts the time it
started this process) and ``rss_kib`` (the peak resident set size so far).

Standard library only before the measured import, and no import of ``benchmarks``: what is
timed is the library's own cold start.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from decimal import Decimal  # the models' annotations name it
from typing import Any

#: The models declared: the one read (``Order``, the loopback server's GetItem answer) and 19
#: more of the same size on the same table, as an application declares them.
MODELS = 20
#: Every other model's fields, their annotations as text (``from __future__ import annotations``).
FIELDS = {
    "id": "str",
    "owner": "str",
    "name": "str",
    "count": "int",
    "price": "Decimal",
    "active": "bool",
    "tags": "list[str]",
    "note": "str",
}
ORDER = {
    "id": "str",
    "user_id": "str",
    "status": "str",
    "currency": "str",
    "total": "Decimal",
    "item_count": "int",
    "express": "bool",
}
ORDER_ID = "o-000001"
TABLE = "bench"
KEYS = {"access": "bench", "secret": "bench-secret", "region": "us-east-1"}


def _names() -> list[str]:
    return [f"Model{n:02d}" for n in range(1, MODELS)]


def _dynorm(url: str) -> Any:
    import asyncio  # noqa: PLC0415

    import attrs  # noqa: PLC0415

    # The names an application uses (``import dynorm`` alone loads them on first use).
    from dynorm import Table, connect  # noqa: PLC0415

    imported = time.perf_counter()
    table = Table(TABLE, pk="pk", sk="sk")

    def declare(name: str, fields: dict[str, str], prefix: str) -> Any:
        namespace = {"__annotations__": dict(fields), "__module__": __name__}
        cls = attrs.define(type(name, (), namespace))
        return table.model(pk=prefix + "#{id}", sk=prefix + "#{id}")(cls)

    order = declare("Order", ORDER, "order")
    for name in _names():
        declare(name, FIELDS, name.lower())

    async def first() -> Any:
        async with connect(
            table,
            endpoint_url=url,
            region_name=KEYS["region"],
            aws_access_key_id=KEYS["access"],
            aws_secret_access_key=KEYS["secret"],
        ) as db:
            return await db.get(order, id=ORDER_ID)

    return imported, asyncio.run(first())


def _dataclasses() -> Any:
    """The 20 classes of a client that maps no models (dataclasses); returns ``Order``'s."""
    import dataclasses  # noqa: PLC0415

    order = dataclasses.make_dataclass("Order", list(ORDER.items()))
    for name in _names():
        dataclasses.make_dataclass(name, list(FIELDS.items()))
    return order


def _aiodynamo(url: str) -> Any:
    import asyncio  # noqa: PLC0415

    import aiohttp  # noqa: PLC0415
    from aiodynamo.client import Client  # noqa: PLC0415
    from aiodynamo.credentials import Key, StaticCredentials  # noqa: PLC0415
    from aiodynamo.http.aiohttp import AIOHTTP  # noqa: PLC0415
    from yarl import URL  # noqa: PLC0415

    imported = time.perf_counter()
    order = _dataclasses()

    async def first() -> Any:
        async with aiohttp.ClientSession() as session:
            client = Client(
                AIOHTTP(session),
                StaticCredentials(Key(KEYS["access"], KEYS["secret"])),
                KEYS["region"],
                endpoint=URL(url),
            )
            key = f"order#{ORDER_ID}"
            item = await client.table(TABLE).get_item({"pk": key, "sk": key})
            return order(**{name: item[name] for name in ORDER})

    return imported, asyncio.run(first())


def _aiobotocore(url: str) -> Any:
    import asyncio  # noqa: PLC0415

    from aiobotocore.session import get_session  # noqa: PLC0415

    imported = time.perf_counter()
    order = _dataclasses()

    def value(attribute: Any) -> Any:
        ((kind, raw),) = attribute.items()
        return Decimal(raw) if kind == "N" else raw

    async def first() -> Any:
        async with get_session().create_client(
            "dynamodb",
            region_name=KEYS["region"],
            endpoint_url=url,
            aws_access_key_id=KEYS["access"],
            aws_secret_access_key=KEYS["secret"],
        ) as client:
            key = {"S": f"order#{ORDER_ID}"}
            got: Any = await client.get_item(TableName=TABLE, Key={"pk": key, "sk": key})
            return order(**{name: value(got["Item"][name]) for name in ORDER})

    return imported, asyncio.run(first())


def _pynamodb(url: str) -> Any:
    from pynamodb.attributes import (  # noqa: PLC0415
        BooleanAttribute,
        ListAttribute,
        NumberAttribute,
        UnicodeAttribute,
    )
    from pynamodb.models import Model  # noqa: PLC0415

    imported = time.perf_counter()
    kinds = {
        "str": UnicodeAttribute,
        "int": NumberAttribute,
        "Decimal": NumberAttribute,
        "bool": BooleanAttribute,
    }

    def declare(name: str, fields: dict[str, str]) -> Any:
        meta = type(
            "Meta",
            (),
            {
                "table_name": TABLE,
                "host": url,
                "region": KEYS["region"],
                "aws_access_key_id": KEYS["access"],
                "aws_secret_access_key": KEYS["secret"],
            },
        )
        attributes: dict[str, Any] = {
            "pk": UnicodeAttribute(hash_key=True),
            "sk": UnicodeAttribute(range_key=True),
        }
        for field, kind in fields.items():
            made = ListAttribute(of=UnicodeAttribute) if kind == "list[str]" else kinds[kind]()
            attributes[field] = made
        return type(name, (Model,), {"Meta": meta, **attributes})

    order = declare("Order", ORDER)
    for name in _names():
        declare(name, FIELDS)
    key = f"order#{ORDER_ID}"
    return imported, order.get(key, key)


def _pydynox(url: str) -> Any:
    import asyncio  # noqa: PLC0415

    from pydynox import DynamoDBClient, Model, ModelConfig  # noqa: PLC0415
    from pydynox.attributes import (  # noqa: PLC0415
        BooleanAttribute,
        DecimalAttribute,
        ListAttribute,
        NumberAttribute,
        StringAttribute,
    )

    imported = time.perf_counter()
    kinds = {
        "str": StringAttribute,
        "int": NumberAttribute,
        "Decimal": DecimalAttribute,
        "bool": BooleanAttribute,
        "list[str]": ListAttribute,
    }
    client = DynamoDBClient(
        region=KEYS["region"],
        access_key=KEYS["access"],
        secret_key=KEYS["secret"],
        endpoint_url=url,
    )

    def declare(name: str, fields: dict[str, str]) -> Any:
        attributes: dict[str, Any] = {
            "model_config": ModelConfig(table=TABLE, client=client),
            "pk": StringAttribute(partition_key=True),
            "sk": StringAttribute(sort_key=True),
        }
        attributes.update({field: kinds[kind]() for field, kind in fields.items()})
        return type(name, (Model,), attributes)

    order = declare("Order", ORDER)
    for name in _names():
        declare(name, FIELDS)
    key = f"order#{ORDER_ID}"
    return imported, asyncio.run(order.get(pk=key, sk=key))


LIBRARIES = {
    "dynorm": _dynorm,
    "aiodynamo": _aiodynamo,
    "aiobotocore": _aiobotocore,
    "pynamodb": _pynamodb,
    "pydynox": _pydynox,
}


def _peak_rss_kib() -> int:
    """This process's peak resident set size, KiB.

    Linux's ``VmHWM``: ``ru_maxrss`` survives ``exec``, so a child of a large parent (the
    benchmark) would report the parent's size. Elsewhere ``ru_maxrss`` (KiB on Linux and BSD).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:  # noqa: PTH123 (no pathlib: it costs the child)
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str]) -> None:
    what = argv[0]
    start = time.perf_counter()
    if what.startswith("import:"):
        for module in what.removeprefix("import:").split(","):
            __import__(module)
        imported = time.perf_counter()
    else:
        imported, item = LIBRARIES[what](argv[1])
        if item is None:
            raise SystemExit(f"{what}: no item read")
    done = time.time_ns()
    rss = _peak_rss_kib()
    result = {"import_ms": (imported - start) * 1e3, "first_item_ns": done, "rss_kib": rss}
    # Then the interpreter exits: the parent counts that in the whole process's time.
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
