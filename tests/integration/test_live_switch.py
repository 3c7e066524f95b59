"""A strategy switch with the application live: readers and writers beside the migration.

For every pair of strategies (``live_models.py``), the children are stored in the old layout
through the before-declaration (``via=OLD``); then, at once, on one event loop: ``migrate(db,
Parent.children)`` (no ``from_``: it reads ``was=``) with a small Scan page, so it takes many
pages; writers adding, updating and removing children through the after-declaration (``via=NEW,
was=OLD``); readers loading the children every way a loader reads them (``load=``, a limited
load then ``async for``, ``all()``, page by page with cursors, ``count()``), each result
compared with the ledger of acknowledged writes (``live_ledger.py``): no child missing, none
twice, in the new strategy's order, with its latest acknowledged value (a child whose write is
in flight may show either value). Afterwards ``migration_status`` is 0 and a raw Scan finds
every child once, in the new layout, with the value the ledger expects, and no old copy.

The second test runs the same with the fault proxy injecting throttling, 500s (before and after
applying), connection resets and lost replies into every request (the migration's, the
writers' and the readers'); a write that fails after its last attempt counts as in flight for
ever. Everything goes through the proxy, which serves a TransactWriteItems alone, as DynamoDB
isolates a transaction (moto does not: a write served beside a cancelled transaction is
undone). Readers read with consistent reads (an index is read as the server serves it: moto
updates indexes with the write). Every loop is bounded by a count.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Final

import attrs
import pytest

from dynorm import Database, DynormError, OutcomeUnknownError, ThrottledError, TransportError
from dynorm.migrations import MigrationReport, migrate, migration_status
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import Fault, FaultPlan, Faulty, FaultyConnect, connect_to

from .live_ledger import Ledger
from .live_models import KEY_ATTRIBUTES, SWITCHES, Switch
from .raw import flat, raw_scan

# A migration beside the application (``was=`` declared) moves each child in one
# TransactWriteItems, which dynalite lacks: the plugin skips the module there, saying so.
pytestmark = [pytest.mark.integration, pytest.mark.transactions]

PARENTS: Final = [f"p{i}" for i in range(3)]
NAMES: Final = [f"c{i:02}" for i in range(8)]
SEEDED: Final = NAMES[:5]  # stored in the old layout before anything runs
WRITERS: Final = 2  # writer w owns the names whose number is w modulo WRITERS
WRITES_EACH: Final = 12
READERS: Final = 2
READS_EACH: Final = 8
PAGE: Final = 3  # a reader's page of children
SCAN_PAGE: Final = 3  # the migration's Scan page: six pages for the seeded items
ATTEMPTS: Final = 10

FAULTS: Final[Mapping[Fault, float]] = {
    "throttle": 0.05,
    "error_500": 0.03,
    "error_500_after": 0.03,
    "reset": 0.03,
    "lost_reply": 0.04,
}
#: What a write may raise after its last attempt: its outcome is unknown.
UNKNOWN: Final = (OutcomeUnknownError, TransportError, ThrottledError)


@pytest.fixture(params=list(SWITCHES))
def switch(request: pytest.FixtureRequest) -> Switch:
    return SWITCHES[request.param]


@attrs.define
class Live:
    """One run: the switch, the ledger, and what went wrong (collected, reported at the end)."""

    switch: Switch
    ledger: Ledger = attrs.field(factory=Ledger)
    problems: list[str] = attrs.field(factory=list)
    unknown: int = 0  # writes whose outcome is unknown
    spans: dict[str, list[tuple[int, int]]] = attrs.field(factory=dict)

    def span(self, what: str, start: int, end: int) -> None:
        self.spans.setdefault(what, []).append((start, end))

    def beside_migration(self, what: str) -> int:
        """How many ``what`` (reads, writes) overlapped the migration's first run."""
        [(begun, ended)] = self.spans["migration"]
        return sum(1 for start, end in self.spans.get(what, []) if start < ended and end > begun)


# -- the old layout, stored through the before-declaration ---------------------------------------


def seeded_qty(name: str) -> int:
    return int(name[1:]) + 1


async def seed(old: Database, live: Live) -> None:
    sw = live.switch
    await old.put_all([sw.parent(pid, new=False) for pid in PARENTS])
    children = [(pid, name) for pid in PARENTS for name in SEEDED]
    if sw.old.embedded:  # one UpdateItem per child, into the parent's map
        await asyncio.gather(
            *(
                old.add(
                    sw.parent(p, new=False), sw.old_rel, sw.child(p, n, seeded_qty(n), new=False)
                )
                for p, n in children
            )
        )
    else:
        await old.put_all([sw.child(p, n, seeded_qty(n), new=False) for p, n in children])
    for pid, name in children:
        live.ledger.seed(pid, name, seeded_qty(name))


# -- writers: add, update (add over a stored child) and remove through the after-declaration -----


async def writer(db: Database, live: Live, number: int, seed_: int) -> None:
    sw, ledger = live.switch, live.ledger
    rng = random.Random(seed_ * 100 + number)  # noqa: S311 - a fixed stream, not a secret
    owned = [name for i, name in enumerate(NAMES) if i % WRITERS == number]
    # Embedded children are written through the relationship only; items by key as well.
    removals = ["remove"] if sw.new.embedded else ["remove", "delete"]
    for step in range(WRITES_EACH):
        pid, name = rng.choice(PARENTS), rng.choice(owned)
        qty: int | None = 1000 * (number + 1) + step
        if ledger.latest(pid, name) is not None and rng.random() < 0.4:
            qty, how = None, rng.choice(removals)
        elif sw.new.embedded:
            how = "add"
        elif ledger.stored(pid, name):  # db.update changes a child that is there
            how = rng.choice(["add", "put", "update"])
        else:
            how = rng.choice(["add", "put"])
        write = ledger.send(pid, name, qty)
        try:
            await write_child(db, sw, how, (pid, name), qty)
        except UNKNOWN:
            live.unknown += 1  # in flight for ever: either value may be stored
        except DynormError as exc:  # a bug: reported with the rest, the run goes on
            live.problems.append(f"{sw.id} writer: {how} {pid}/{name} qty={qty}: {exc!r}")
        except WrongError as exc:
            ledger.ack(write)
            live.problems.append(f"{sw.id} writer: {how} {pid}/{name} qty={qty}: {exc}")
        else:
            ledger.ack(write)
        live.span("writes", write.sent, ledger.tick())


async def write_child(
    db: Database, sw: Switch, how: str, key: tuple[str, str], qty: int | None
) -> None:
    """One write of the after-declaration: ``db.add``/``put``/``update``/``remove``/``delete``."""
    pid, name = key
    parent, child = sw.parent(pid), sw.child(pid, name, qty or 0)
    if how == "remove":
        await db.remove(parent, sw.new_rel, child)
    elif how == "delete":
        await db.delete(child)
    elif how == "update":
        updated = await db.update(child, set={"qty": qty})
        if (updated.pid, updated.name, updated.qty) != (pid, name, qty):
            raise WrongError(f"db.update returned {updated!r}")
    else:
        stored = await (db.add(parent, sw.new_rel, child) if how == "add" else db.put(child))
        if stored != child:
            raise WrongError(f"db.{how} returned {stored!r}")


class WrongError(Exception):
    """A call that returned what no correct call returns (more than its limit, say)."""


# -- readers: every way a loader reads, each result checked against the ledger -------------------


async def load(db: Database, sw: Switch, pid: str) -> list[Any]:
    parent = await db.get(sw.new_parent, pid=pid, load=[sw.new_rel], consistent=True)
    children: list[Any] = parent.children.loaded
    return children


async def limited_then_rest(db: Database, sw: Switch, pid: str) -> list[Any]:
    parent = await db.get(sw.new_parent, pid=pid, load=[sw.new_rel.limit(PAGE)], consistent=True)
    if len(parent.children.loaded) > PAGE:
        raise WrongError(f"load=[rel.limit({PAGE})] loaded {len(parent.children.loaded)}")
    return [child async for child in parent.children]


async def everything(db: Database, sw: Switch, pid: str) -> list[Any]:
    parent = await db.get(sw.new_parent, pid=pid, consistent=True)
    children: list[Any] = await parent.children.all()
    return children


async def pages(db: Database, sw: Switch, pid: str) -> list[Any]:
    parent = await db.get(sw.new_parent, pid=pid, consistent=True)
    children: list[Any] = []
    cursor: str | None = None
    for _ in range(len(NAMES) + 2):  # at most one page per child, and an empty last one
        page = await parent.children.page(limit=PAGE, cursor=cursor)
        if len(page.items) > PAGE:
            raise WrongError(f"page(limit={PAGE}) returned {len(page.items)}")
        children += page.items
        cursor = page.cursor
        if cursor is None:
            return children
    raise WrongError(f"the pages of {pid} did not end")


READS: Final[Mapping[str, Callable[[Database, Switch, str], Coroutine[Any, Any, list[Any]]]]] = {
    "load=": load,
    "load=limit then async for": limited_then_rest,
    "all()": everything,
    "page(cursor=)": pages,
}


def check_children(live: Live, how: str, pid: str, children: list[Any], start: int) -> None:
    sw = live.switch
    end = live.ledger.tick()
    what = f"{sw.id} {how}"
    names = [child.name for child in children]
    if names != sorted(names, key=sw.order):
        live.problems.append(f"{what}: {pid}'s children out of order: {names}")
    for child in children:
        if child.pid != pid:
            live.problems.append(f"{what}: {pid} got another parent's child {child!r}")
        # Copies: written by the new code, or still as the old code stored them (none).
        if getattr(child, "parent_title", "") not in ("", sw.title(pid)):
            live.problems.append(f"{what}: {pid}/{child.name} has a wrong copy {child!r}")
    seen = [(child.name, child.qty) for child in children]
    live.problems += live.ledger.check(pid, seen, start, end, what=what)


async def reader(db: Database, live: Live, number: int) -> None:
    sw, ledger = live.switch, live.ledger
    kinds = [*READS, "count()", "db.load()"]
    for step in range(READS_EACH):
        how = kinds[(step + number) % len(kinds)]
        pid = PARENTS[(step * 3 + number) % len(PARENTS)]
        start = ledger.tick()
        try:
            if how == "count()":
                check_count(live, pid, await count(db, sw, pid), start)
            elif how == "db.load()":
                loaded = await load_many(db, sw)
                for parent in loaded:
                    check_children(live, how, parent.pid, parent.children.loaded, start)
            else:
                check_children(live, how, pid, await READS[how](db, sw, pid), start)
        except (DynormError, WrongError) as exc:  # a bug: reported with the rest, the run goes on
            live.problems.append(f"{sw.id} {how} of {pid} raised {exc!r}")
        live.span("reads", start, ledger.clock)


async def load_many(db: Database, sw: Switch) -> Sequence[Any]:
    """Every parent, then their children at once (``db.load``: a read per parent, concurrently)."""
    parents = [await db.get(sw.new_parent, pid=pid, consistent=True) for pid in PARENTS]
    return await db.load(parents, sw.new_rel)


async def count(db: Database, sw: Switch, pid: str) -> int:
    parent = await db.get(sw.new_parent, pid=pid, consistent=True)
    counted: int = await parent.children.count()
    return counted


def check_count(live: Live, pid: str, counted: int, start: int) -> None:
    end = live.ledger.tick()
    low, high = live.ledger.count_range(pid, start, end)
    if not low <= counted <= high:
        live.problems.append(
            f"{live.switch.id} count(): {pid} has {counted}, expected {low}..{high} "
            f"(ticks {start}..{end})"
        )


# -- what is stored at the end --------------------------------------------------------------------


def stored_children(live: Live, items: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """Every child the raw items hold in the new layout; a problem for anything else."""
    sw = live.switch
    parents = {i["pid"]: i for i in items if i["sk"].startswith("#P#")}
    if sorted(parents) != PARENTS:
        live.problems.append(f"stored: parents {sorted(parents)}, expected {PARENTS}")
    found: dict[tuple[str, str], int] = {}
    attribute = sw.new_rel.name  # the embedded map (before or after) is the relationship's name
    for pid, parent in parents.items():
        if parent.get("title") != sw.title(pid):
            live.problems.append(f"stored: parent {pid} changed: {parent}")
        if sw.new.embedded:
            for name, entry in parent.get(attribute, {}).items():
                found[pid, name] = int(entry["qty"])
                if entry.get("name") != name:
                    live.problems.append(f"stored: {pid}'s map entry {name} is {entry}")
        elif parent.get(attribute):
            live.problems.append(f"stored: {pid} still holds embedded children {parent}")
    for item in items:
        if item["sk"].startswith("#P#"):
            continue
        key = (item["pid"], item["name"])
        keys = {a: item[a] for a in KEY_ATTRIBUTES if a in item}
        if sw.new.embedded or keys != sw.new_keys(*key):
            live.problems.append(f"stored: an old or misplaced copy of {key}: {keys}")
            continue
        if key in found:
            live.problems.append(f"stored: {key} twice")
        found[key] = int(item["qty"])
        if sw.new.copies and item.get("parent_title") != sw.title(item["pid"]):
            live.problems.append(f"stored: {key} has a stale copy: {item}")
    return found


async def check_stored(direct: Database, live: Live) -> None:
    items = [{k: flat(v) for k, v in raw.items()} for raw in await raw_scan(direct)]
    found = stored_children(live, items)
    for key, allowed in sorted(live.ledger.final().items()):
        if found.get(key) not in allowed:
            live.problems.append(
                f"stored: {key[0]}/{key[1]} is {found.get(key)}, expected one of {allowed}"
            )
    for key in sorted(set(found) - set(live.ledger.writes)):
        live.problems.append(f"stored: {key} no one wrote")
    if live.switch.new.inverted:
        await check_inverted(direct, live, found)


async def check_inverted(
    direct: Database, live: Live, found: Mapping[tuple[str, str], int]
) -> None:
    """An adjacency list read the other way: a member's parents, by the inverted index."""
    for name in NAMES:
        query = direct.query(live.switch.new_child, index="inverted", name=name)
        pids = sorted(child.pid for child in await query.all())
        expected = sorted(pid for pid, member in found if member == name)
        if pids != expected:
            live.problems.append(f"inverted: {name}'s parents are {pids}, expected {expected}")


# -- the scenario ---------------------------------------------------------------------------------


async def timed_migration(db: Database, live: Live) -> MigrationReport | None:
    start = live.ledger.tick()
    try:
        return await migrate(db, live.switch.new_rel, page_size=SCAN_PAGE)
    except DynormError as exc:
        live.problems.append(f"{live.switch.id} migrate beside the application: {exc!r}")
        return None
    finally:
        live.span("migration", start, live.ledger.tick())


async def switch_live(
    faulty: Faulty, readers: Database, live: Live, *, faults: FaultPlan | None
) -> MigrationReport | None:
    """Migrate beside writers and readers, all through the proxy."""
    faulty.proxy.use(faults)
    try:
        report, *_ = await asyncio.gather(
            timed_migration(faulty.db, live),
            *(writer(faulty.db, live, w, faults.seed if faults else 0) for w in range(WRITERS)),
            *(reader(readers, live, r) for r in range(READERS)),
        )
    finally:
        faulty.proxy.use(None)
    first: MigrationReport | None = report
    if first is None or not first.ok:
        # A parent the writers changed under the run five times in a row is left for the
        # next run (docs/migrations.md): run again, as a user would, with the writers done.
        try:
            again = await migrate(faulty.direct, live.switch.new_rel, page_size=SCAN_PAGE)
        except DynormError as exc:
            live.problems.append(f"{live.switch.id} migrate again: {exc!r}")
        else:
            if not again.ok:
                live.problems.append(f"{live.switch.id} migrate again: {again}")
    return first


async def run(
    faulty_connect: FaultyConnect, server: RunningServer, sw: Switch, faults: FaultPlan | None
) -> Live:
    live = Live(sw)
    async with (
        faulty_connect(sw.after, max_attempts=ATTEMPTS) as faulty,
        connect_to(server.url, sw.before, faulty.db.table_name) as old,
        # The readers' own connection, through the proxy: it serves a transaction alone, as
        # DynamoDB isolates one (moto does not: see tests/faultproxy.py).
        connect_to(
            faulty.proxy.url, sw.after, faulty.db.table_name, max_attempts=ATTEMPTS
        ) as readers,
    ):
        await seed(old, live)
        await switch_live(faulty, readers, live, faults=faults)
        try:
            left = await migration_status(faulty.direct, sw.new_rel)
        except DynormError as exc:
            live.problems.append(f"{sw.id} migration_status: {exc!r}")
        else:
            if left != 0:
                live.problems.append(f"{sw.id} migration_status is {left} after the migration")
        # Every reader's way once more, with nothing moving: all exact.
        await reader(faulty.direct, live, READERS)
        await check_stored(faulty.direct, live)
        assert faulty.proxy.errors == []
        if faults is not None:
            assert {e.fault for e in faulty.proxy.injected} >= {"lost_reply", "reset"}
    assert not live.problems, "\n".join(live.problems[:40])
    assert live.beside_migration("reads") > 0
    assert live.beside_migration("writes") > 0
    return live


async def test_a_live_switch_shows_every_child_once(
    switch: Switch, faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    await run(faulty_connect, dynorm_server, switch, None)


async def test_a_live_switch_under_faults_loses_nothing(
    switch: Switch, faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    await run(faulty_connect, dynorm_server, switch, FaultPlan(seed=29, rates=FAULTS))


@pytest.mark.parametrize("pair", ["partition->embedded", "index->embedded"])
async def test_pages_into_a_map_resume_after_the_last_key_returned(
    pair: str, dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """A child removed before the cursor between two pages moves no other child out of them."""
    sw = SWITCHES[pair]
    async with (
        dynorm_connect(sw.after) as db,
        connect_to(dynorm_server.url, sw.before, db.table_name) as old,
    ):
        await old.put_all(
            [sw.parent("p0", new=False)]
            + [sw.child("p0", name, seeded_qty(name), new=False) for name in SEEDED]
        )
        # The first page before the migration, the second after it and after a removal.
        parent = await db.get(sw.new_parent, pid="p0", consistent=True)
        first = await parent.children.page(limit=2)
        assert (await migrate(db, sw.new_rel)).ok
        await db.remove(sw.parent("p0"), sw.new_rel, sw.child("p0", SEEDED[0], 0))
        second = await parent.children.page(limit=2, cursor=first.cursor)

        assert [c.name for c in first.items] == SEEDED[:2]
        assert [c.name for c in second.items] == SEEDED[2:4]


async def test_an_update_of_a_child_the_migration_moves_meanwhile_goes_on(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    """``db.update`` of a child still in the old layout, moved by the migration mid-update.

    The update is refused (its new item is not there yet); before it reads the old copy to move
    it, the migration moves the child in: the update must go on against the moved child.
    """
    sw = SWITCHES["partition->index"]
    async with (
        faulty_connect(sw.after) as faulty,
        connect_to(dynorm_server.url, sw.before, faulty.db.table_name) as old,
    ):
        await old.put_all([sw.parent("p0", new=False), sw.child("p0", "c01", 1, new=False)])
        new_key = sw.new_keys("p0", "c01")
        held = faulty.proxy.pause(  # the read of the old copy (the table key the old code gave)
            "GetItem",
            when=lambda body: body.get("Key", {}).get("pk") != {"S": new_key["pk"]},
        )
        update = asyncio.ensure_future(faulty.db.update(sw.child("p0", "c01", 1), set={"qty": 5}))
        arrived = asyncio.ensure_future(held.arrived.wait())
        await asyncio.wait({update, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), await update  # refused, the update reads the old copy to move it
        assert (await migrate(faulty.direct, sw.new_rel)).ok
        held.release()

        assert (await update).qty == 5
        parent = await faulty.direct.get(sw.new_parent, pid="p0", load=[sw.new_rel])
        assert parent.children.loaded == [sw.child("p0", "c01", 5)]
