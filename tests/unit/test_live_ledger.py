"""The ledger of ``test_live_switch.py``: what a read between two ticks may see of a child."""

from __future__ import annotations

from tests.integration.live_ledger import Ledger


def test_a_read_after_an_acknowledged_write_sees_only_its_value() -> None:
    ledger = Ledger()
    ledger.seed("p", "a", 1)
    ledger.ack(ledger.send("p", "a", 2))
    start = ledger.tick()
    assert ledger.acceptable("p", "a", start, ledger.tick()) == {2}
    assert ledger.check("p", [("a", 1)], start, ledger.clock, what="load") == [
        f"load of p (ticks {start}..{ledger.clock}): a=1 (allowed [2])"
    ]


def test_a_write_in_flight_during_the_read_may_be_seen_or_not() -> None:
    ledger = Ledger()
    ledger.seed("p", "a", 1)
    start = ledger.tick()
    removal = ledger.send("p", "a", None)
    end = ledger.tick()
    ledger.ack(removal)
    assert ledger.acceptable("p", "a", start, end) == {1, None}
    assert ledger.check("p", [], start, end, what="load") == []
    assert ledger.count_range("p", start, end) == (0, 1)
    # A read that begins after the acknowledgement must not see the child.
    later = ledger.tick()
    assert ledger.check("p", [("a", 1)], later, ledger.tick(), what="load") != []


def test_a_write_sent_after_the_read_ended_is_not_seen() -> None:
    ledger = Ledger()
    ledger.seed("p", "a", 1)
    start, end = ledger.tick(), ledger.tick()
    ledger.ack(ledger.send("p", "a", 2))
    assert ledger.acceptable("p", "a", start, end) == {1}


def test_an_unknown_outcome_stays_possible_until_the_next_acknowledged_write() -> None:
    ledger = Ledger()
    ledger.send("p", "a", 5)  # never acknowledged: it may or may not be stored
    assert ledger.final()["p", "a"] == {None, 5}
    ledger.ack(ledger.send("p", "a", 6))
    assert ledger.final()["p", "a"] == {6}


def test_missing_and_twice_are_problems() -> None:
    ledger = Ledger()
    ledger.seed("p", "a", 1)
    ledger.seed("p", "b", 2)
    start, end = ledger.tick(), ledger.tick()
    assert ledger.check("p", [("a", 1), ("a", 1)], start, end, what="pages") == [
        f"pages of p (ticks {start}..{end}): a twice",
        f"pages of p (ticks {start}..{end}): missing b",
    ]
