"""Relationships across two tables of one connection (``people`` and ``ledger``).

An account (``people``) has notes in its own partition and ledger entries in the other table,
read through that table's index ``GSI1``; an entry belongs to its account. The string targets
name models of the other table, found in this module.
"""

from __future__ import annotations

from dynorm import GSI, BelongsTo, HasMany, Index, Partition, Table

people = Table("people", pk="pk", sk="sk")
ledger = Table("ledger", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@people.model(pk="ACCOUNT#{account_id}", sk="#ACCOUNT#{account_id}")
class Account:
    account_id: str
    name: str = ""
    notes = HasMany["Note"](via=Partition())
    entries = HasMany["Entry"](via=Index("GSI1"), newest_first=True)
    stars = HasMany["Star"](via=Index("GSI1", shards=4))  # spread over 4 index partitions


@people.model(pk="ACCOUNT#{account_id}", sk="NOTE#{note_id}")
class Note:
    account_id: str
    note_id: str
    text: str = ""


@ledger.model(
    pk="LEDGER#{account_id}",
    sk="ENTRY#{entry_id}",
    GSI1=("ACCOUNT#{account_id}", "AT#{at}#{entry_id}"),
)
class Entry:
    account_id: str
    entry_id: str
    at: str
    amount: int = 0
    account = BelongsTo(Account)


@ledger.model(pk="RECEIPT#{receipt_id}", sk="RECEIPT#{receipt_id}")
class Receipt:
    """Its account's key is outside its own: read after the receipt, a second round trip."""

    receipt_id: str
    account_id: str
    account = BelongsTo(Account)


@ledger.model(
    pk="STAR#{user}", sk="STAR#{account_id}", GSI1=("STARS#{account_id}#{shard}", "U#{user}")
)
class Star:
    account_id: str
    user: str
