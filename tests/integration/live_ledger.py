"""What a reader may see while writers and a migration work: a ledger of every write's span.

Each writer owns its children (no two writers write one child) and writes them one at a time,
so a child's writes form a sequence. Every event takes a tick of one logical clock (the tests
run on one event loop): a write is recorded when it is sent and when it is acknowledged. A
read that started at tick ``r0`` and ended at ``r1`` may see, for one child, the value of the
last write acknowledged before ``r0`` and that of every later write sent before ``r1`` (in
flight while it read, or whose outcome is unknown: an error after its last attempt). Any
other value, a child missing that every acceptable state holds, or a child twice, is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

#: A child's value: its ``qty``, or None for "not stored".
Value = int | None


@attrs.define
class Write:
    value: Value
    sent: int
    acked: int | None = None  # None: in flight, or its outcome is unknown


@attrs.define
class Ledger:
    clock: int = 0
    writes: dict[tuple[str, str], list[Write]] = attrs.field(factory=dict)

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def seed(self, pid: str, name: str, value: Value) -> None:
        """A child as it is stored before anything runs (acknowledged at tick 0)."""
        self.writes[pid, name] = [Write(value, 0, 0)]

    def send(self, pid: str, name: str, value: Value) -> Write:
        write = Write(value, self.tick())
        self.writes.setdefault((pid, name), [Write(None, 0, 0)]).append(write)
        return write

    def ack(self, write: Write) -> None:
        write.acked = self.tick()

    def latest(self, pid: str, name: str) -> Value:
        """The writer's view: the last value it wrote (acknowledged or not)."""
        return self.writes[pid, name][-1].value if (pid, name) in self.writes else None

    def stored(self, pid: str, name: str) -> bool:
        """Whether the child is stored for sure (its last write, acknowledged, stored it)."""
        last = self.writes.get((pid, name), [Write(None, 0, 0)])[-1]
        return last.acked is not None and last.value is not None

    def acceptable(self, pid: str, name: str, start: int, end: int) -> set[Value]:
        """The values a read between ticks ``start`` and ``end`` may see for this child."""
        writes = self.writes.get((pid, name), [Write(None, 0, 0)])
        last = max(i for i, w in enumerate(writes) if w.acked is not None and w.acked < start)
        return {writes[last].value} | {w.value for w in writes[last + 1 :] if w.sent < end}

    def names(self, pid: str) -> list[str]:
        return sorted(name for p, name in self.writes if p == pid)

    def check(
        self,
        pid: str,
        seen: Iterable[tuple[str, int]],
        start: int,
        end: int,
        *,
        what: str,
    ) -> list[str]:
        """The problems of a read of ``pid``'s children (name, qty) between two ticks."""
        twice: list[str] = []
        got: dict[str, int] = {}
        for name, qty in seen:
            if name in got:
                twice.append(name)
            got[name] = qty
        missing: list[str] = []
        wrong: list[str] = []
        for name in sorted(set(got) | set(self.names(pid))):
            allowed = self.acceptable(pid, name, start, end)
            value = got.get(name)
            if value in allowed:
                continue
            if value is None:
                missing.append(name)
            else:
                wrong.append(f"{name}={value} (allowed {sorted(allowed, key=str)})")
        at = f"{what} of {pid} (ticks {start}..{end})"
        problems = [f"{at}: {', '.join(twice)} twice"] if twice else []
        if missing:
            problems.append(f"{at}: missing {', '.join(missing)}")
        if wrong:
            problems.append(f"{at}: {'; '.join(wrong)}")
        return problems

    def count_range(self, pid: str, start: int, end: int) -> tuple[int, int]:
        """The fewest and the most children a count between two ticks may find."""
        sets = [self.acceptable(pid, name, start, end) for name in self.names(pid)]
        return (
            sum(1 for s in sets if None not in s),
            sum(1 for s in sets if s != {None}),
        )

    def final(self) -> Mapping[tuple[str, str], set[Value]]:
        """Every child's acceptable values now, nothing in flight."""
        now = self.tick()
        return {key: self.acceptable(*key, now, now) for key in self.writes}
