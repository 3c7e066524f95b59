"""Versioned models for the model version tests (and the CLI's ``migrate --upgrade``).

``User`` is at schema version 3: version 1 stored ``name`` ("Ada Lovelace") and ``age`` as a
text, version 2 split the name into ``first``/``last`` (age still a text), version 3 stores the
age as a number. ``Member`` (children of ``Team``, in its partition) is at version 2: version 1
called ``nick`` what is now ``name``. ``Note`` is unversioned.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import attrs

from dynorm import GSI, Embedded, HasMany, Index, Partition, Table

app = Table("versions", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


def user_v1_to_v2(item: dict[str, Any]) -> dict[str, Any]:
    first, _, last = item.pop("name").partition(" ")
    return {**item, "first": first, "last": last}


def user_v2_to_v3(item: dict[str, Any]) -> dict[str, Any]:
    age = item["age"]
    assert isinstance(age, str), age  # version 2 stored a text
    return {**item, "age": Decimal(age)}


@app.model(
    pk="USER#{uid}",
    sk="USER#{uid}",
    GSI1=("LAST#{last}", "USER#{uid}"),
    schema_version=3,
    upgrades={1: user_v1_to_v2, 2: user_v2_to_v3},
)
class User:
    uid: str
    first: str
    last: str
    age: int
    city: str = ""


def member_v1_to_v2(item: dict[str, Any]) -> dict[str, Any]:
    item["name"] = item.pop("nick")
    return item


@app.model(pk="TEAM#{tid}", sk="#TEAM")
class Team:
    tid: str
    members = HasMany["Member"](via=Partition())


@app.model(pk="TEAM#{tid}", sk="MEMBER#{mid}", schema_version=2, upgrades={1: member_v1_to_v2})
class Member:
    tid: str
    mid: str
    name: str


@attrs.define
class Step:
    n: str
    text: str = ""


def recipe_v1_to_v2(item: dict[str, Any]) -> dict[str, Any]:
    item["name"] = item.pop("title")
    return item


@app.model(pk="RECIPE#{rid}", sk="RECIPE#{rid}", schema_version=2, upgrades={1: recipe_v1_to_v2})
class Recipe:
    rid: str
    name: str
    steps = HasMany[Step](Step, via=Embedded(key="n"))


@app.model(pk="NOTE#{nid}", sk="NOTE#{nid}")
class Note:
    nid: str
    text: str = ""


# -- raw items as each version stored them --------------------------------------------------


def s(text: str) -> dict[str, Any]:
    return {"S": text}


def n(number: int) -> dict[str, Any]:
    return {"N": str(number)}


def user_item(uid: str, version: int | None) -> dict[str, Any]:
    """A User item as the code of ``version`` stored it (None: version 1, before versions)."""
    item: dict[str, Any] = {"pk": s(f"USER#{uid}"), "sk": s(f"USER#{uid}"), "uid": s(uid)}
    item["legacy"] = s("kept")  # no version declares it: every rewrite keeps it
    if version in (None, 1):
        item |= {"name": s("Ada Lovelace"), "age": s("36")}
    elif version == 2:
        item |= {"first": s("Ada"), "last": s("Lovelace"), "age": s("36")}
    else:
        item |= {"first": s("Ada"), "last": s("Lovelace"), "age": n(36), "city": s("")}
        item |= {"GSI1PK": s("LAST#Lovelace"), "GSI1SK": s(f"USER#{uid}")}
    if version is not None:
        item["_v"] = n(version)
    return item


def upgraded_item(uid: str) -> dict[str, Any]:
    """What ``upgrade_items`` stores for an old User item: version 3, ``legacy`` kept."""
    return user_item(uid, 3) | {"_v": n(3)}


def same_stored(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two raw items hold the same values (numbers compared by value)."""

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (str(int(x)) if k == "N" else norm(x)) for k, x in v.items()}
        return v

    same: bool = norm(a) == norm(b)
    return same


# -- a versioned child moved by a migration (Partition() -> Index("GSI1")) ----------------------

moved_before = Table(
    "versions-move", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
)
moved_after = Table(
    "versions-move", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
)


@moved_before.model(pk="CREW#{cid}", sk="#CREW")
class OldCrew:
    cid: str
    hands = HasMany["OldHand"](via=Partition())


@moved_before.model(pk="CREW#{cid}", sk="HAND#{hid}")
class OldHand:  # version 1: "nick"
    cid: str
    hid: str
    nick: str


@moved_after.model(pk="CREW#{cid}", sk="#CREW", GSI1=("CREW#{cid}", "#CREW"))
class Crew:
    cid: str
    hands = HasMany["Hand"](via=Index("GSI1"))


@moved_after.model(
    pk="HAND#{cid}#{hid}",
    sk="HAND#{cid}#{hid}",
    GSI1=("CREW#{cid}", "HAND#{hid}"),
    schema_version=2,
    upgrades={1: member_v1_to_v2},
)
class Hand:
    cid: str
    hid: str
    name: str
