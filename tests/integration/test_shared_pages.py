"""Relationships that share one Query each get their own page.

Comments, labels and watchers of an issue live in its partition and load with it in one Query.
DynamoDB returns at most 1 MB a page, so ~4 KB comments can fill it before the labels: then the
labels (and any relationship the page left short) read on by themselves, concurrently, so each
``.loaded`` is what a load of that relationship alone gives, and iterating afterwards yields
every child exactly once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import attrs
import pytest

from dynorm import Database, HasMany, Partition, Table
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("shared-pages", pk="pk", sk="sk")


# "#ISSUE#" < "COMMENT#" < "LABEL#" < "WATCHER#": the issue comes first in its children's Query.
@table.model(pk="ISSUE#{issue_id}", sk="#ISSUE#{issue_id}")
@attrs.define
class Issue:
    issue_id: str
    comments = HasMany["Comment"]("Comment", via=Partition())
    labels = HasMany["Label"]("Label", via=Partition())
    watchers = HasMany["Watcher"]("Watcher", via=Partition())


@table.model(pk="ISSUE#{issue_id}", sk="COMMENT#{n:04d}")
@attrs.define
class Comment:
    issue_id: str
    n: int
    body: str = ""


@table.model(pk="ISSUE#{issue_id}", sk="LABEL#{n:04d}")
@attrs.define
class Label:
    issue_id: str
    n: int
    body: str = ""


@table.model(pk="ISSUE#{issue_id}", sk="WATCHER#{user}")
@attrs.define
class Watcher:
    issue_id: str
    user: str


BODY = "x" * 4000  # ~4 KB an item: 300 comments are ~1.2 MB, more than one 1 MB page


def comments(count: int, issue_id: str = "1") -> list[Comment]:
    return [Comment(issue_id, n, BODY) for n in range(count)]


def labels(count: int, issue_id: str = "1", body: str = "") -> list[Label]:
    return [Label(issue_id, n, body) for n in range(count)]


WATCHERS = [Watcher("1", user) for user in ("ann", "bo", "cy")]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def once_each(children: AsyncIterator[object], expected: Sequence[object]) -> None:
    seen = [child async for child in children]
    assert seen == list(expected)


async def test_labels_load_although_comments_fill_the_page(db: Database) -> None:
    every_comment = comments(300)
    await db.put_all([Issue("1"), *every_comment, *labels(5)])
    with count_requests(db) as log:
        issue = await db.get(Issue, issue_id="1", load=[Issue.comments.limit(5), Issue.labels])
    # The shared Query (the issue and a page of comments), then the labels' own Query.
    assert log.operations == ["Query", "Query"]
    assert issue.comments.loaded == every_comment[:5]
    assert issue.labels.loaded == labels(5)
    with count_requests(db) as log:
        await once_each(aiter(issue.labels), labels(5))
    assert len(log) == 0  # the labels' read reached their end
    await once_each(aiter(issue.comments), every_comment)


async def test_each_relationship_the_page_left_short_reads_on_by_itself(db: Database) -> None:
    every_comment = comments(300)
    await db.put_all([Issue("1"), *every_comment, *labels(5), *WATCHERS])
    with count_requests(db) as log:
        issue = await db.get(
            Issue, issue_id="1", load=[Issue.comments, Issue.labels, Issue.watchers]
        )
    # The shared Query, then the labels' and the watchers' Queries side by side.
    assert log.operations == ["Query", "Query", "Query"]
    # Comments opened the page and had it to themselves, as a load of them alone would.
    loaded = issue.comments.loaded
    assert 0 < len(loaded) < 300
    assert loaded == every_comment[: len(loaded)]
    assert issue.labels.loaded == labels(5)
    assert issue.watchers.loaded == WATCHERS
    with count_requests(db) as log:
        await once_each(aiter(issue.comments), every_comment)
    assert log.operations == ["Query"]  # the rest of the comments, from where the page ended
    await once_each(aiter(issue.labels), labels(5))
    await once_each(aiter(issue.watchers), WATCHERS)


async def test_a_limited_relationship_cut_in_its_range_reads_only_what_it_lacks(
    db: Database,
) -> None:
    # ~800 KB of comments, then ~400 KB of labels: the page ends among the labels.
    every_comment = comments(200)
    every_label = labels(100, body=BODY)
    await db.put_all([Issue("1"), *every_comment, *every_label])
    with count_requests(db) as log:
        issue = await db.get(Issue, issue_id="1", load=[Issue.comments, Issue.labels.limit(90)])
    assert log.operations == ["Query", "Query"]
    assert issue.comments.loaded == every_comment
    assert issue.labels.loaded == every_label[:90]
    with count_requests(db) as log:
        await once_each(aiter(issue.comments), every_comment)
    assert len(log) == 0  # the page went past the last comment: nothing is left to read
    await once_each(aiter(issue.labels), every_label)


async def test_everything_in_one_page_is_still_one_query(db: Database) -> None:
    await db.put_all([Issue("1"), *comments(10), *labels(5), *WATCHERS])
    with count_requests(db) as log:
        issue = await db.get(
            Issue, issue_id="1", load=[Issue.comments.limit(3), Issue.labels, Issue.watchers]
        )
    assert log.operations == ["Query"]
    assert issue.comments.loaded == comments(3)
    assert issue.labels.loaded == labels(5)
    assert issue.watchers.loaded == WATCHERS
    await once_each(aiter(issue.comments), comments(10))


async def test_db_load_reads_each_relationship_on_its_own(db: Database) -> None:
    issues = [Issue("1"), Issue("2")]
    stored = [*comments(300, "1"), *comments(300, "2"), *labels(5, "1"), *labels(5, "2")]
    await db.put_all([*issues, *stored])
    with count_requests(db) as log:
        await db.load(issues, Issue.comments.limit(5), Issue.labels)
    # One Query per issue and relationship, none shared: no page to fight over.
    assert log.operations == ["Query"] * 4
    for issue in issues:
        assert issue.comments.loaded == comments(5, issue.issue_id)
        assert issue.labels.loaded == labels(5, issue.issue_id)
        await once_each(aiter(issue.labels), labels(5, issue.issue_id))
        await once_each(aiter(issue.comments), comments(300, issue.issue_id))
