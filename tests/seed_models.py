"""The seed tables' first models (DESIGN.md): organizations, users and their tickets.

Shared by the unit tests (plans as plain values) and the integration tests (the same models
against a server), so both test exactly the declarations the design gives.
"""

from __future__ import annotations

import datetime

import attrs

from dynorm import GSI, BelongsTo, HasMany, Index, Partition, Table

# -- seeds 000 and 001: organizations, users, tickets -------------------------------------------

app = Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@app.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"]("User", via=Partition())


@app.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    GSI1=("ORG#{org_name}#USER#{username}", "USER#{username}"),
)
@attrs.define
class User:
    org_name: str
    username: str
    user_type: str = "Member"
    org = BelongsTo[Org](Org)
    tickets = HasMany["Ticket"]("Ticket", via=Index("GSI1"), newest_first=True)


@app.model(
    pk="TICKET#{ticket_id}",
    sk="TICKET#{ticket_id}",
    GSI1=("ORG#{org_name}#USER#{username}", "TICKET#{ticket_id}"),
)
@attrs.define
class Ticket:
    ticket_id: str
    org_name: str
    username: str
    created: datetime.datetime
