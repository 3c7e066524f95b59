"""``BelongsTo`` links found the way ``HasMany`` finds them, ``key=`` where shapes cannot decide.

An issue finds its project by inverting ``Project.issues`` (an index collection), and its reporter
and assignee, both users, through ``key=``. However many BelongsTo a load names, the parents are
read together: one BatchGetItem per 100 distinct keys.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import attrs
import pytest

from dynorm import (
    GSI,
    BelongsTo,
    Database,
    DefinitionError,
    Embedded,
    HasMany,
    Index,
    ItemNotFoundError,
    Table,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("rel-links", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(
    pk="PROJECT#{project_id}", sk="PROJECT#{project_id}", GSI1=("PROJECT#{project_id}", "#PROJECT")
)
@attrs.define
class Project:
    project_id: str
    title: str = ""
    issues = HasMany["Issue"]("Issue", via=Index("GSI1"))


@table.model(pk="USER#{user_id}", sk="USER#{user_id}")
@attrs.define
class User:
    user_id: str
    name: str = ""


@table.model(
    pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}", GSI1=("PROJECT#{in_project}", "ISSUE#{issue_id}")
)
@attrs.define
class Issue:
    issue_id: str
    in_project: str  # not named like Project's key field: only Project.issues links them
    reporter_id: str
    assignee_id: str | None = None
    project = BelongsTo[Project](Project)
    reporter = BelongsTo[User](User, key={"user_id": "reporter_id"})
    assignee = BelongsTo[User](User, key={"user_id": "assignee_id"})


@attrs.define
class Step:
    name: str
    done: bool = False


@table.model(pk="TASK#{task_id}", sk="TASK#{task_id}")
@attrs.define
class Task:
    task_id: str
    project_id: str
    owner: str
    project = BelongsTo[Project](Project)  # fields of the same names
    owned_by = BelongsTo[User](User, key={"user_id": "owner"})
    steps = HasMany[Step](Step, via=Embedded(key="name"))


APOLLO = Project("apollo", "Apollo")
ALICE = User("alice", "Alice")
BOB = User("bob", "Bob")
FIRST = Issue("1", "apollo", reporter_id="alice", assignee_id="bob")
UNASSIGNED = Issue("2", "apollo", reporter_id="bob")
STRAY = Issue("3", "gone", reporter_id="nobody", assignee_id="alice")  # parents never stored


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([APOLLO, ALICE, BOB, FIRST, UNASSIGNED, STRAY])
        yield database


def test_the_links_each_relationship_found() -> None:
    assert Issue.project.link == {"project_id": "in_project"}
    assert Issue.reporter.link == {"user_id": "reporter_id"}
    assert Issue.assignee.link == {"user_id": "assignee_id"}


async def test_an_issue_finds_its_project_by_inverting_the_index_has_many(db: Database) -> None:
    with count_requests(db) as log:
        issue = await db.get(Issue, issue_id="1", load=[Issue.project])
    # The project's key is in the issue item, so it is read after it.
    assert log.operations == ["GetItem", "BatchGetItem"]
    assert issue.project.loaded == APOLLO
    # And the other direction reads the same link.
    project = await db.get(Project, project_id="apollo", load=[Project.issues])
    assert sorted(i.issue_id for i in project.issues.loaded) == ["1", "2"]


async def test_get_with_two_belongs_to_reads_both_parents_in_one_batch_get(db: Database) -> None:
    with count_requests(db) as log:
        issue = await db.get(Issue, issue_id="1", load=[Issue.project, Issue.reporter])
    assert log.operations == ["GetItem", "BatchGetItem"]
    assert issue.project.loaded == APOLLO
    assert issue.reporter.loaded == ALICE
    assert not issue.assignee.is_loaded


async def test_reporter_and_assignee_are_told_apart_by_key(db: Database) -> None:
    with count_requests(db) as log:
        issue = await db.get(
            Issue, issue_id="1", load=[Issue.project, Issue.reporter, Issue.assignee]
        )
    assert log.operations == ["GetItem", "BatchGetItem"]
    assert issue.reporter.loaded == ALICE
    assert issue.assignee.loaded == BOB


async def test_db_load_of_several_belongs_to_sends_one_batch_get(db: Database) -> None:
    issues = [FIRST, UNASSIGNED, STRAY]
    with count_requests(db) as log:
        await db.load(issues, Issue.project, Issue.reporter, Issue.assignee)
    assert log.operations == ["BatchGetItem"]
    assert [i.project.loaded for i in issues] == [APOLLO, APOLLO, None]
    assert [i.reporter.loaded for i in issues] == [ALICE, BOB, None]
    # No assignee (None) loads as None without asking for a key; a missing one too.
    assert [i.assignee.loaded for i in issues] == [BOB, None, ALICE]


async def test_db_load_batches_per_100_distinct_keys(db: Database) -> None:
    projects = [Project(f"p{i:02d}") for i in range(70)]
    users = [User(f"u{i:02d}") for i in range(70)]
    # 200 issues over 70 projects and 70 users: 140 distinct parents, each read once.
    issues = [Issue(f"i{i}", f"p{i % 70:02d}", reporter_id=f"u{i % 70:02d}") for i in range(200)]
    await db.put_all([*projects, *users])
    with count_requests(db) as log:
        await db.load(issues, Issue.project, Issue.reporter)
    assert log.operations == ["BatchGetItem", "BatchGetItem"]
    for issue in issues:
        assert issue.project.loaded == Project(issue.in_project)
        assert issue.reporter.loaded == User(issue.reporter_id)


async def test_a_parent_read_alone_follows_the_same_link(db: Database) -> None:
    issue = await db.get(Issue, issue_id="2")
    with count_requests(db) as log:
        assert await issue.reporter.get() == BOB
        assert await issue.project.get() == APOLLO
    assert log.operations == ["GetItem", "GetItem"]
    with count_requests(db) as log, pytest.raises(ItemNotFoundError, match=r"Issue\.assignee"):
        await issue.assignee.get()
    assert len(log) == 0  # assignee_id is None: there is nothing to read
    assert issue.assignee.loaded is None


async def test_children_read_through_the_index_then_their_parents_by_key(db: Database) -> None:
    project = await db.get(Project, project_id="apollo", load=[Project.issues])
    issues = sorted(project.issues.loaded, key=lambda i: i.issue_id)
    with count_requests(db) as log:
        await db.load(issues, Issue.reporter, Issue.assignee)
    assert log.operations == ["BatchGetItem"]
    assert [(i.reporter.loaded, i.assignee.loaded) for i in issues] == [(ALICE, BOB), (BOB, None)]


async def test_parents_and_embedded_children_share_one_batch_get(db: Database) -> None:
    for task_id, owner in (("t1", "alice"), ("t2", "bob")):
        task = await db.put(Task(task_id, "apollo", owner))
        await db.add(task, Task.steps, Step(f"{task_id}-first"))
    # Built in code: the steps are not held, so the tasks' own items are read for them.
    tasks = [Task("t1", "apollo", "alice"), Task("t2", "apollo", "bob")]
    with count_requests(db) as log:
        await db.load(tasks, Task.project, Task.owned_by, Task.steps)
    assert log.operations == ["BatchGetItem"]
    assert [t.project.loaded for t in tasks] == [APOLLO, APOLLO]
    assert [t.owned_by.loaded for t in tasks] == [ALICE, BOB]
    assert [t.steps.loaded for t in tasks] == [[Step("t1-first")], [Step("t2-first")]]


def test_two_ways_to_hold_the_child_make_the_link_ambiguous() -> None:
    indexes = [GSI("GSI1", pk="G1P", sk="G1S"), GSI("GSI2", pk="G2P", sk="G2S")]
    other = Table("rel-links-ambiguous", pk="pk", sk="sk", indexes=indexes)

    @other.model(
        pk="USER#{user_id}",
        sk="USER#{user_id}",
        GSI1=("USER#{user_id}", "#USER"),
        GSI2=("USER#{user_id}", "#USER"),
    )
    @attrs.define
    class Person:
        user_id: str
        reported: ClassVar[HasMany[Any]] = HasMany("Ticket", via=Index("GSI1"))
        assigned: ClassVar[HasMany[Any]] = HasMany("Ticket", via=Index("GSI2"))

    with pytest.raises(DefinitionError) as caught:

        @other.model(
            pk="T#{ticket_id}",
            sk="T#{ticket_id}",
            GSI1=("USER#{reporter_id}", "T#{ticket_id}"),
            GSI2=("USER#{assignee_id}", "T#{ticket_id}"),
        )
        @attrs.define
        class Ticket:
            ticket_id: str
            reporter_id: str
            assignee_id: str
            person: ClassVar[BelongsTo[Any]] = BelongsTo(Person)

    message = str(caught.value)
    assert message.startswith("Ticket.person: Person holds Ticket in more than one way")
    assert message.endswith("pass key={'user_id': '<Ticket field>'}")


def test_two_links_to_one_model_without_key_are_refused() -> None:
    other = Table("rel-links-twins", pk="pk", sk="sk")

    @other.model(pk="USER#{user_id}", sk="USER#{user_id}")
    @attrs.define
    class Person:
        user_id: str

    with pytest.raises(DefinitionError, match=r"Ticket\.reporter, Ticket\.assignee all point"):

        @other.model(pk="T#{ticket_id}", sk="T#{ticket_id}")
        @attrs.define
        class Ticket:
            ticket_id: str
            user_id: str
            reporter: ClassVar[BelongsTo[Any]] = BelongsTo(Person)
            assignee: ClassVar[BelongsTo[Any]] = BelongsTo(Person, key={"user_id": "user_id"})
