"""``dynorm migrate``, run as a user runs it: in a subprocess, against the test server.

The data is written in the OLD layout through a Database on ``cli_models.old``; the command
migrates it to what ``cli_models.new`` declares. Every run works in the test's own directory
(``cwd=tmp_path``), where the default checkpoint file goes.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from dynorm import Database
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import FaultProxy, Injected, connect_to

from .cli import Cli, Ran
from .cli_models import (
    Author,
    Book,
    Jar,
    Member,
    OldAuthor,
    OldBook,
    OldJar,
    OldMember,
    OldShelf,
    Shelf,
    new,
    old,
)
from .race_models import MAP_LAYOUT, ROW_LAYOUT, by_key, maps, s
from .raw import raw_put, raw_scan, stored

pytestmark = pytest.mark.integration

MODELS = "tests.integration.cli_models:new"
JARS = {
    "a": [("honey", 450), ("jam", 300), ("salt", 1000)],
    "b": [("pickles", 700)],
    "c": [("capers", 90), ("olives", 250)],
}
CHILDREN = sum(len(j) for j in JARS.values())


@attrs.frozen
class Tables:
    """One fresh stored table, reached through the current declaration and the old one."""

    db: Database
    old: Database

    @property
    def name(self) -> str:
        return self.db.table_name


@pytest.fixture
async def tables(dynorm_connect: Connect, dynorm_server: RunningServer) -> AsyncIterator[Tables]:
    async with (
        dynorm_connect(new) as db,
        connect_to(dynorm_server.url, old, db.table_name) as old_db,
    ):
        yield Tables(db, old_db)


async def write_old_shelves(tables: Tables) -> None:
    await tables.old.put_all(
        [OldShelf(s, f"room {s}") for s in JARS]
        + [OldJar(s, n, g) for s, jars in JARS.items() for n, g in jars]
        + [OldMember("u1", "ada@example.com")]
    )


def old_layout() -> list[dict[str, Any]]:
    return sorted(
        [{"pk": f"S#{s}", "sk": f"#SHELF#{s}", "shelf": s, "room": f"room {s}"} for s in JARS]
        + [
            {"pk": f"S#{s}", "sk": f"JAR#{n}", "shelf": s, "name": n, "grams": str(g)}
            for s, jars in JARS.items()
            for n, g in jars
        ]
        + [MEMBER],
        key=lambda i: (i["pk"], i["sk"]),
    )


def new_layout() -> list[dict[str, Any]]:
    return sorted(
        [
            {
                "pk": f"S#{s}",
                "sk": f"#SHELF#{s}",
                "GSI1PK": f"S#{s}",
                "GSI1SK": f"#SHELF#{s}",
                "shelf": s,
                "room": f"room {s}",
            }
            for s in JARS
        ]
        + [
            {
                "pk": f"J#{s}#{n}",
                "sk": f"J#{s}#{n}",
                "GSI1PK": f"S#{s}",
                "GSI1SK": f"JAR#{n}",
                "shelf": s,
                "name": n,
                "grams": str(g),
            }
            for s, jars in JARS.items()
            for n, g in jars
        ]
        + [MEMBER],
        key=lambda i: (i["pk"], i["sk"]),
    )


MEMBER = {"pk": "M#u1", "sk": "M#u1", "uid": "u1", "email": "ada@example.com"}


def counts(ran: Ran) -> dict[str, int]:
    """The summary table's rows: ``{"items scanned": 10, "items written": 6, ...}``."""
    rows = re.findall(r"^[│|] (\S.*?) +[│|] +(\d+) [│|]$", ran.out, re.MULTILINE)
    return {label: int(n) for label, n in rows}


def checkpoints(where: Path) -> list[Path]:
    return sorted(where.glob(".dynorm-migrate-*"))


def move(tables: Tables) -> tuple[str, ...]:
    """The command line that moves Shelf.jars out of the shelves' partitions."""
    return ("migrate", MODELS, "Shelf.jars", "--from", "Partition()", "--table-name", tables.name)


async def assert_every_jar_in_the_new_layout(tables: Tables) -> None:
    assert await stored(tables.db) == new_layout()
    for shelf, jars in JARS.items():
        found = await tables.db.get(Shelf, shelf=shelf, load=[Shelf.jars])
        assert found.jars.loaded == [Jar(shelf, n, g) for n, g in sorted(jars)]


# -- an interrupted run, resumed -----------------------------------------------------------------


async def test_a_run_that_fails_part_way_resumes_from_its_checkpoint(
    cli: Cli, tables: Tables, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    await write_old_shelves(tables)
    command = (*move(tables), "--page-size", "2", "--yes")
    deletes = 0

    def third_delete(body: dict[str, Any]) -> bool:
        # A deletion after the first page's (at most 2): its jar's new item went in first.
        del body
        nonlocal deletes
        deletes += 1
        return deletes == 3

    async with FaultProxy.running(dynorm_server.url) as proxy:
        proxy.inject("error_500", operation="DeleteItem", when=third_delete)
        failed = await cli.run(
            *command, "--endpoint-url", proxy.url, "--max-attempts", "1", cwd=tmp_path
        )
        assert proxy.injected == [Injected("DeleteItem", "error_500")]

        assert failed.code == 1, failed.output
        # A conditioned delete answered with a 500 may have been applied: the run stops.
        assert "Error: OutcomeUnknownError: DeleteItem: " in failed.err
        [checkpoint] = checkpoints(tmp_path)
        assert checkpoint.name == f".dynorm-migrate-{tables.name}-Shelf.jars-strategy.json"
        assert f"run the same command again to resume from {checkpoint.name}" in failed.err
        saved = json.loads(checkpoint.read_text())
        assert saved["fingerprint"]["kind"] == "move"
        assert saved["counters"]["pages"] >= 1
        # Partly moved, nothing lost: every jar is stored in the old layout or the new (or both,
        # for the page whose deletions failed).
        items = await stored(tables.db)
        in_old = {(i["shelf"], i["name"]) for i in items if i["sk"].startswith("JAR#")}
        in_new = {(i["shelf"], i["name"]) for i in items if i["pk"].startswith("J#")}
        every = {(s, n) for s, jars in JARS.items() for n, _ in jars}
        assert in_old | in_new == every
        assert in_new - in_old  # the first pages moved
        assert in_old - in_new  # the pages after the failure did not
        assert in_old & in_new  # the failed page was put, not yet deleted

        # The checkpoint names the endpoint it was made on: straight to the server is another.
        elsewhere = await cli.run(*command, cwd=tmp_path)
        resumed = await cli.run(*command, "--endpoint-url", proxy.url, cwd=tmp_path)

    assert elsewhere.code == 1
    assert "belongs to another migration (endpoint:" in elsewhere.err
    assert "run the same command again" not in elsewhere.err
    assert resumed.code == 0, resumed.output
    assert f"Resumed from {checkpoint.name}" in resumed.err
    assert checkpoints(tmp_path) == []
    summary = counts(resumed)
    # The failed page's new items were stored before it stopped, and the other deletion of
    # that page may have been (its counts were not saved): the resumed run finds them done.
    assert CHILDREN - 2 <= summary["items written"] < CHILDREN
    assert CHILDREN - 1 <= summary["items deleted"] <= CHILDREN
    assert summary["verified: changes left to make"] == 0
    assert summary["verified: children read through the declaration"] == CHILDREN
    assert summary["verified: children not reachable"] == 0
    await assert_every_jar_in_the_new_layout(tables)

    again = await cli.run(*command, cwd=tmp_path)

    assert again.code == 0, again.output
    assert "Resuming" not in again.err
    summary = counts(again)
    assert summary["items scanned"] == len(new_layout())
    assert summary["items written"] == 0
    assert summary["items deleted"] == 0
    assert summary["parents updated"] == 0
    assert await stored(tables.db) == new_layout()
    assert checkpoints(tmp_path) == []


# -- dry run and confirmation --------------------------------------------------------------------


async def test_a_dry_run_and_an_unconfirmed_run_write_nothing(
    cli: Cli, tables: Tables, tmp_path: Path
) -> None:
    await write_old_shelves(tables)

    dry = await cli.run(*move(tables), "--dry-run", cwd=tmp_path)
    unconfirmed = await cli.run(*move(tables), cwd=tmp_path)  # no --yes, nothing on stdin

    assert dry.code == 0, dry.output
    assert counts(dry) == {
        "items scanned": len(old_layout()),
        "items written": CHILDREN,
        "items deleted": CHILDREN,
        "parents updated": len(JARS),
    }
    assert "Dry run: nothing was written" in dry.out
    assert unconfirmed.code == 1
    assert f"Rewrite Shelf.jars (strategy) in table {tables.name!r}" in unconfirmed.err
    assert "Aborted" in unconfirmed.err
    assert await stored(tables.db) == old_layout()
    assert checkpoints(tmp_path) == []

    confirmed = await cli.run(*move(tables), "--no-checkpoint", stdin="y\n", cwd=tmp_path)

    assert confirmed.code == 0, confirmed.output
    assert counts(confirmed)["items written"] == CHILDREN
    await assert_every_jar_in_the_new_layout(tables)
    assert checkpoints(tmp_path) == []


async def test_what_would_fail_fails_before_the_confirmation_is_asked(
    cli: Cli, tables: Tables, tmp_path: Path
) -> None:
    await write_old_shelves(tables)
    elsewhere = ("migrate", MODELS, "Shelf.jars", "--from", "Partition()")

    no_region = cli(*move(tables), stdin="y\n", cwd=tmp_path, unset=["AWS_DEFAULT_REGION"])
    no_table = cli(*elsewhere, "--table-name", f"{tables.name}-gone", stdin="y\n", cwd=tmp_path)

    assert no_region.code == 1
    assert "no AWS region is configured; pass --region" in no_region.err
    assert no_table.code == 1
    assert f"there is no table {tables.name + '-gone'!r}" in no_table.err
    assert "to migrate; create it (dynorm create-table)" in no_table.err
    for ran in (no_region, no_table):
        assert "Rewrite" not in ran.err  # not asked: the answer would have been for nothing
        assert "Traceback" not in ran.err
    assert await stored(tables.db) == old_layout()
    assert checkpoints(tmp_path) == []


# -- the other kinds -----------------------------------------------------------------------------


async def test_copies_fills_each_childs_copies_from_its_parent(
    cli: Cli, tables: Tables, tmp_path: Path
) -> None:
    await tables.old.put_all(
        [
            OldAuthor("ann", "1950"),
            OldBook("ann", "one"),
            OldBook("ann", "two"),
            OldAuthor("bob", "1960"),
            OldBook("bob", "three"),
        ]
    )
    await tables.db.put(Book("bob", "four", "1960"))  # written by the new code: right already

    ran = await cli.run(
        "migrate", MODELS, "Author.books", "--copies", "--table-name", tables.name, "-y",
        cwd=tmp_path,
    )  # fmt: skip

    assert ran.code == 0, ran.output
    assert ran.out.startswith("copies: Author.books: copies {'born': 'author_born'} at ")
    summary = counts(ran)
    assert (summary["items scanned"], summary["items written"], summary["items deleted"]) == (
        6,
        3,
        0,
    )
    books = [i for i in await stored(tables.db) if i["sk"].startswith("BOOK#")]
    assert [(b["author"], b["title"], b["author_born"]) for b in books] == [
        ("ann", "one", "1950"),
        ("ann", "two", "1950"),
        ("bob", "four", "1960"),
        ("bob", "three", "1960"),
    ]
    author = await tables.db.get(Author, author="ann", load=[Author.books])
    assert author.books.loaded == [Book("ann", "one", "1950"), Book("ann", "two", "1950")]
    assert checkpoints(tmp_path) == []


async def test_backfill_writes_the_keys_of_the_named_index(
    cli: Cli, tables: Tables, tmp_path: Path
) -> None:
    await tables.old.put_all(
        [
            OldMember("u1", "ada@example.com"),
            OldMember("u2", "bob@example.com"),
            OldMember("u3"),
            OldShelf("a"),
        ]
    )

    ran = await cli.run(
        "migrate", MODELS, "Member", "--backfill", "--index", "GSI2", "--table-name",
        tables.name, "-y", cwd=tmp_path,
    )  # fmt: skip

    assert ran.code == 0, ran.output
    assert ran.out.startswith("backfill: Member")
    assert counts(ran)["items written"] == 2
    members = [i for i in await stored(tables.db) if i["pk"].startswith("M#")]
    assert [(m["uid"], m.get("GSI2PK"), m.get("GSI2SK")) for m in members] == [
        ("u1", "EMAIL#ada@example.com", "M#u1"),
        ("u2", "EMAIL#bob@example.com", "M#u2"),
        ("u3", None, None),  # no email: left out of the sparse index
    ]
    found = await tables.db.query(Member, index="GSI2", email="bob@example.com").all()
    assert found == [Member("u2", "bob@example.com")]
    shelf = next(i for i in await stored(tables.db) if i["pk"] == "S#a")
    assert "GSI2PK" not in shelf  # other models are left alone


async def test_a_backfill_dynamodb_would_refuse_is_an_error_naming_the_item(
    cli: Cli, tables: Tables, tmp_path: Path
) -> None:
    await tables.old.put_all([OldMember("u1", "ada@example.com"), OldMember("u2", "b" * 3000)])
    before = await stored(tables.db)

    ran = await cli.run(
        "migrate", MODELS, "Member", "--backfill", "--index", "GSI2", "--table-name",
        tables.name, "-y", cwd=tmp_path,
    )  # fmt: skip

    assert ran.code == 1, ran.output
    assert "Traceback" not in ran.err
    assert "nothing was written for this page" in ran.err
    assert "pk='M#u2', sk='M#u2': Member: key attribute 'GSI2PK' would be 3006 bytes" in ran.err
    assert await stored(tables.db) == before


# -- a verification that fails ---------------------------------------------------------------------


async def test_a_failed_verification_exits_1_and_a_second_run_moves_the_rest(
    cli: Cli, tables: Tables, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    """A writer still on the old code adds a jar while the run verifies: the check says so."""
    await write_old_shelves(tables)
    async with FaultProxy.running(dynorm_server.url) as proxy:
        verifying = proxy.pause("Scan", when=lambda body: body.get("ConsistentRead") is True)
        run = asyncio.create_task(
            cli.run(*move(tables), "-y", "--endpoint-url", proxy.url, cwd=tmp_path)
        )
        arrived = asyncio.create_task(verifying.arrived.wait())
        await asyncio.wait({run, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), (await run).output
        await tables.old.put(OldJar("b", "late", 5))
        verifying.release()
        failed = await run

    assert failed.code == 1, failed.output
    # The late jar is still to write in the new layout and to delete from the old.
    assert counts(failed)["verified: changes left to make"] == 2
    assert "problem: 2 change(s) still to make in a page: 1 to write, 1 to delete" in failed.out
    assert "the migration is not complete" in failed.err
    assert "run it again to move what is left" in failed.err

    again = await cli.run(*move(tables), "-y", cwd=tmp_path)

    assert again.code == 0, again.output
    assert counts(again)["items written"] == 1
    found = await tables.db.get(Shelf, shelf="b", load=[Shelf.jars])
    assert found.jars.loaded == [Jar("b", "late", 5), Jar("b", "pickles", 700)]


# -- usage errors: refused before anything is sent ------------------------------------------------


@pytest.mark.offline
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["Nope.jars", "--from", "Partition()"],
            "has no model 'Nope'; its models: Author, Book, Jar, Member, Shelf",
        ),
        (
            ["Shelf", "--from", "Partition()"],
            "'Shelf' is not a relationship; Shelf's relationships: Shelf.jars",
        ),
        (["Shelf.jars", "--backfill"], "--backfill and --upgrade take a model, not 'Shelf.jars'"),
        (["Shelf.jars", "--from", "Partitio()"], "'Partitio' is not a strategy; write one of"),
        (["Shelf.jars", "--from", "Index(GSI1)"], "arguments must be literals"),
        (["Shelf.jars"], "Shelf.jars declares no was=: give --from STRATEGY"),
        (["Shelf.jars", "--status"], "Shelf.jars declares no was=: give --from STRATEGY"),
        (
            ["Shelf.jars", "--copies", "--from", "Partition()"],
            "give one of --copies, --backfill, --upgrade, or a strategy change",
        ),
        (["Shelf.jars", "--copies", "--status"], "give one of --copies, --backfill"),
        (["Shelf.jars", "--from", "Partition()", "--json"], "--json goes with --status"),
        (["Shelf.jars", "--copies", "--index", "GSI1"], "--index goes with --backfill"),
        (
            ["Shelf.jars", "--from", "Partition()", "--page-size", "5000"],
            "5000 is not in the range 1<=x<=1000",
        ),
    ],
)
async def test_nonsense_is_a_usage_error_that_says_what_to_change(
    cli: Cli, tmp_path: Path, args: list[str], message: str
) -> None:
    # An endpoint nothing listens on: a command that sent anything would fail otherwise.
    ran = await cli.run(
        "migrate", MODELS, *args, "-y", "--endpoint-url", "http://127.0.0.1:9", cwd=tmp_path
    )

    assert ran.code == 2, ran.output
    assert message in ran.err
    assert "Try 'dynorm migrate --help' for help." in ran.err
    assert "Traceback" not in ran.err
    assert checkpoints(tmp_path) == []


# -- Ctrl-C ---------------------------------------------------------------------------------------


async def test_ctrl_c_stops_a_run_that_the_same_command_resumes(
    cli: Cli, tables: Tables, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    await write_old_shelves(tables)
    command = (*move(tables), "--page-size", "2", "--yes")
    async with FaultProxy.running(dynorm_server.url) as proxy:
        # Hold the second deletion; SIGINT arrives while the run waits for it.
        held = proxy.pause("DeleteItem", skip=1)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *command,
            "--endpoint-url",
            proxy.url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path,
            env=cli.environment(tmp_path),
        )
        ended = asyncio.create_task(process.wait())
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({ended, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), "the run ended before its second deletion"
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        held.release()  # the held batch may still land, as a reply lost on the way would
        [checkpoint] = checkpoints(tmp_path)

        resumed = await cli.run(*command, "--endpoint-url", proxy.url, cwd=tmp_path)

    assert process.returncode == 130
    assert f"Interrupted; run the same command again to resume from {checkpoint.name}" in (
        err.decode()
    )
    assert resumed.code == 0, resumed.output
    assert f"Resumed from {checkpoint.name}" in resumed.err
    assert checkpoints(tmp_path) == []
    await assert_every_jar_in_the_new_layout(tables)


# -- two runs at once, items that do not decode, a killed run ------------------------------------

ORDERS_MODELS = "tests.integration.race_models:maps"
#: another tool's line, fitting the template, holding a text where the model has a number
FOREIGN_LINE = {
    "pk": s("O#05"),
    "sk": s("LINE#odd"),
    "order_id": s("05"),
    "name": s("odd"),
    "qty": s("many"),
}


@pytest.fixture
async def orders(dynorm_connect: Connect) -> AsyncIterator[Database]:
    """Orders with their lines as items, attributes no model declares in each (race_models)."""
    async with dynorm_connect(maps) as db:
        await asyncio.gather(*(raw_put(db, item) for item in ROW_LAYOUT))
        yield db


def embed(db: Database) -> tuple[str, ...]:
    """The command line that embeds MapOrder.lines, stored as items until now."""
    return (
        "migrate",
        ORDERS_MODELS,
        "MapOrder.lines",
        "--from",
        "Partition()",
        "--table-name",
        db.table_name,
        "--yes",
    )


async def test_two_commands_at_once_embed_every_line_once_with_every_attribute(
    cli: Cli, orders: Database, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    """The same command in two terminals, in one directory: the first one's reads of the lines
    wait until the second has embedded them all, then it writes from what it read before."""
    async with FaultProxy.running(dynorm_server.url) as proxy:
        held = proxy.pause("Query")
        first = asyncio.create_task(
            cli.run(*embed(orders), "--endpoint-url", proxy.url, cwd=tmp_path)
        )
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({first, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), (await first).output
        try:
            second = await cli.run(*embed(orders), "--endpoint-url", proxy.url, cwd=tmp_path)
        finally:
            held.release()
        ran = await first

    assert ran.code == 0, ran.output
    assert second.code == 0, second.output
    assert by_key(await raw_scan(orders)) == MAP_LAYOUT
    assert checkpoints(tmp_path) == []


async def test_an_item_that_does_not_decode_is_listed_and_the_rest_is_embedded(
    cli: Cli, orders: Database, tmp_path: Path
) -> None:
    await raw_put(orders, FOREIGN_LINE)

    ran = await cli.run(*embed(orders), cwd=tmp_path)

    assert ran.code == 0, ran.output
    assert "skipped: pk='O#05', sk='LINE#odd': " in ran.out
    assert "Skipped items are left as they are: fix or delete them" in ran.out
    assert counts(ran)["items skipped (they do not decode)"] == 1
    assert "Traceback" not in ran.output
    assert by_key(await raw_scan(orders)) == by_key([*MAP_LAYOUT, FOREIGN_LINE])


async def test_a_killed_run_resumes_and_leaves_every_line_once_with_every_attribute(
    cli: Cli, orders: Database, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    command = (*embed(orders), "--page-size", "10")
    checkpoint = tmp_path / f".dynorm-migrate-{orders.table_name}-MapOrder.lines-strategy.json"

    def after_a_saved_page(body: dict[str, Any]) -> bool:
        del body
        return checkpoint.exists() and json.loads(checkpoint.read_text())["counters"]["pages"] > 0

    async with FaultProxy.running(dynorm_server.url) as proxy:
        # A deletion of a line once a page is saved: its order holds the line already.
        held = proxy.pause("DeleteItem", when=after_a_saved_page)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *command,
            "--endpoint-url",
            proxy.url,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=tmp_path,
            env=cli.environment(tmp_path),
        )
        ended = asyncio.create_task(process.wait())
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({ended, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), "the run ended before a deletion after its first checkpoint"
        process.kill()
        assert await ended == -signal.SIGKILL
        held.release()  # the dead run's deletion lands, as a request already on its way would
        partly = by_key(await raw_scan(orders))
        assert partly not in (ROW_LAYOUT, MAP_LAYOUT)

        resumed = await cli.run(*command, "--endpoint-url", proxy.url, cwd=tmp_path)

    assert resumed.code == 0, resumed.output
    assert f"Resumed from {checkpoint.name}" in resumed.err
    assert by_key(await raw_scan(orders)) == MAP_LAYOUT
    assert checkpoints(tmp_path) == []
