"""Two tables one application uses together, for the tests of several tables on one connection.

``shop`` holds customers and their orders (one partition per customer); ``audit`` holds an
entry per event of an order. ``billing`` is a table no test connects to: its model is refused.
The ``dynorm`` command tests import this module in a subprocess (``MODULE:TABLE``).
"""

from __future__ import annotations

from dynorm import GSI, BelongsTo, Denormalized, HasMany, Partition, Table

shop = Table("shop", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
audit = Table("audit", pk="pk", sk="sk")
billing = Table("billing", pk="pk", sk="sk")


@shop.model(pk="CUSTOMER#{customer_id}", sk="#CUSTOMER#{customer_id}")
class Customer:
    customer_id: str
    name: str = ""
    orders = HasMany["Order"](via=Partition())


@shop.model(
    pk="CUSTOMER#{customer_id}",
    sk="ORDER#{order_id}",
    GSI1=("ORDER#{order_id}", "ORDER#{order_id}"),
)
class Order:
    customer_id: str
    order_id: str
    total: int = 0
    customer = BelongsTo(Customer)


@shop.model(pk="STORE#{store_id}", sk="#STORE#{store_id}")
class Store:
    store_id: str
    name: str
    items = HasMany["StoreItem"](via=Denormalized(copy={"name": "store_name"}))


@shop.model(pk="STORE#{store_id}", sk="ITEM#{sku}")
class StoreItem:
    store_id: str
    sku: str
    store_name: str | None = None


@audit.model(pk="ORDER#{order_id}", sk="EVENT#{what}")
class AuditEntry:
    order_id: str
    what: str
    note: str = ""


@billing.model(pk="INVOICE#{invoice_id}", sk="INVOICE#{invoice_id}")
class Invoice:
    invoice_id: str
