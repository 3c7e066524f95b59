"""A tree across two tables of one connection (``crm`` and ``billing``), for cascades.

A customer (``crm``) has contacts in its own partition and invoices in ``billing``, read through
that table's index ``GSI1``; an invoice has lines (``billing``'s ``GSI1`` too), and a line has
remarks back in ``crm`` (through ``crm``'s ``GSI1``). A contact and an invoice of one customer
have the same primary key, each in its own table: a cascade tells them apart by table.
"""

from __future__ import annotations

from dynorm import GSI, HasMany, Index, Partition, Table

crm = Table("crm", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
billing = Table("billing", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@crm.model(pk="C#{customer_id}", sk="#C#{customer_id}")
class Customer:
    customer_id: str
    name: str = ""
    contacts = HasMany["Contact"](via=Partition())
    invoices = HasMany["Invoice"](via=Index("GSI1"))


@crm.model(pk="C#{customer_id}", sk="N#{number}")
class Contact:
    customer_id: str
    number: str
    email: str = ""


@billing.model(
    pk="C#{customer_id}", sk="N#{number}", GSI1=("CUSTOMER#{customer_id}", "INVOICE#{number}")
)
class Invoice:
    customer_id: str
    number: str
    total: int = 0
    lines = HasMany["Line"](via=Index("GSI1"))


@billing.model(
    pk="LINE#{line_id}",
    sk="LINE#{line_id}",
    GSI1=("INVOICE#{customer_id}#{number}", "LINE#{line_id}"),
)
class Line:
    customer_id: str
    number: str
    line_id: str
    remarks = HasMany["Remark"](via=Index("GSI1"))


@crm.model(
    pk="REMARK#{remark_id}", sk="REMARK#{remark_id}", GSI1=("LINE#{line_id}", "R#{remark_id}")
)
class Remark:
    line_id: str
    remark_id: str
    text: str = ""
