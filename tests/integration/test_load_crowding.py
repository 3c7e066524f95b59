"""A load says it can take more than one Query exactly when it can: explain and design are sent.

``Org.users`` reads ``METADATA#a .. USER$``, which passes every ``PROJECT#``: a limited load
asks for its children with a Limit the projects use up, and reads on until it has them.
``Org.projects`` reads ``METADATA#a .. PROJECT$``: nothing but the org and its projects.
"""

from __future__ import annotations

import attrs
import pytest

from dynorm import HasMany, Partition, Table
from dynorm.design import design
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("crowding", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    users = HasMany["User"]("User", via=Partition())
    projects = HasMany["Project"]("Project", via=Partition())


@table.model(pk="ORG#{org}", sk="USER#{username}")
@attrs.define
class User:
    org: str
    username: str


@table.model(pk="ORG#{org}", sk="PROJECT#{pid}")
@attrs.define
class Project:
    org: str
    pid: str


async def test_the_stated_cost_matches_the_queries_sent(dynorm_connect: Connect) -> None:
    stated = {p.name: p.cost for p in design(table).patterns}
    async with dynorm_connect(table) as db:
        await db.put(Org("a"))
        await db.put_all([Project("a", f"p{i}") for i in range(6)])
        await db.put_all([User("a", f"u{i}") for i in range(6)])

        users = [Org.users.limit(2)]
        assert db.explain.get_reads(Org, name="a", load=users).costs() == {
            "Org.users": stated["Org.users"]
        }
        assert "more with a limit, as Project items share its range" in stated["Org.users"]
        with count_requests(db) as log:
            org = await db.get(Org, name="a", load=users)
        assert [u.username for u in org.users.loaded] == ["u0", "u1"]
        assert log.operations.count("Query") > 1  # the projects used up the first Limit

        projects = [Org.projects.limit(2)]
        assert db.explain.get_reads(Org, name="a", load=projects).costs() == {
            "Org.projects": "1 Query on the table"
        }
        assert stated["Org.projects"] == "1 Query on the table"
        with count_requests(db) as log:
            org = await db.get(Org, name="a", load=projects)
        assert [p.pid for p in org.projects.loaded] == ["p0", "p1"]
        assert log.operations == ["Query"]

        # Without a limit the load is one page, whatever shares its range.
        with count_requests(db) as log:
            org = await db.get(Org, name="a", load=[Org.users])
        assert log.operations == ["Query"]
