"""The printed table: sections of aligned rows, each followed by its PASS/FAIL target checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Check:
    """A target from the issue; ``ok`` is None when it cannot be judged (a client is missing)."""

    ok: bool | None
    target: str
    measured: str

    @property
    def verdict(self) -> str:
        return "SKIP" if self.ok is None else "PASS" if self.ok else "FAIL"

    def __str__(self) -> str:
        return f"{self.verdict}  {self.target}: {self.measured}"


@dataclass
class Section:
    """A titled block: a header row, rows of cells, then notes and checks."""

    title: str
    header: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def lines(self) -> list[str]:
        width = len(self.header)
        full = [r for r in self.rows if len(r) == width]
        widths = [max(len(r[i]) for r in [self.header, *full]) for i in range(width)]

        def line(cells: Sequence[str]) -> str:
            if len(cells) < width:  # a row that did not run: its name and why
                return "  " + "  ".join([cells[0].ljust(widths[0]), *cells[1:]])
            text = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
            text += [c.rjust(w) for c, w in zip(cells[2:], widths[2:], strict=True)]
            return "  " + "  ".join(text).rstrip()

        out = [self.title, line(self.header)]
        out += [line(r) for r in self.rows]
        out += [f"  {n}" for n in self.notes]
        out += [f"    {c}" for c in self.checks]
        return out


def render(preamble: Sequence[str], sections: Sequence[Section]) -> str:
    out = list(preamble)
    for section in sections:
        out += ["", *section.lines()]
    return "\n".join(out)


def ratio(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


def number(value: float) -> str:
    """Three significant digits, thousands separated."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
