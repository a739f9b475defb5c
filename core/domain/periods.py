"""The period a page's title names — a year, a quarter or half ("Q3 2026"), a month — and
the series such pages form: titles that are the same once their period is taken out
("Q4 2025 storage market recap", "Q1 2026 storage market recap").

A section quoting a series reads in time order: ranked by relevance, the sample's
market recaps came as Q4 2025, Q2 2026, Q1 2026, Q3 2026 (``in_period_order``).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

_MONTHS = {name.casefold(): i for i, name in enumerate(calendar.month_name) if name}
#: a year, a quarter or half ("Q1", "H2"), a month: what tells a series' pages apart
PERIOD_WORD = re.compile(
    r"^(?:(?:1[89]|2[01])\d\d|[QH][1-4]|" + "|".join(m for m in calendar.month_name if m) + ")$",
    re.I,
)
#: a word of a title; a dotted number is one ("Python 3.4 Release Schedule" and "Python
#: 2.4 Release Schedule" share "Release Schedule", not "4 Release Schedule")
TITLE_WORD = re.compile(r"[^\W_][\w'-]*(?:\.\d+)*")


def period_of(title: str) -> tuple[int, int] | None:
    """(year, the last month it covers) of the period ``title`` names, or None when it
    names no year: "Q3 2026 …" → (2026, 9), "H1 2026" → (2026, 6), "March 2026" →
    (2026, 3), "… in 2025: a year in review" → (2025, 12)."""
    year, month = None, 12
    for word in TITLE_WORD.findall(title):
        if not PERIOD_WORD.match(word):
            continue
        w = word.casefold()
        if w.isdigit():
            year = year if year is not None else int(w)
        elif w[0] == "q":
            month = 3 * int(w[1])
        elif w[0] == "h" and w[1:].isdigit():
            month = 6 * int(w[1])
        else:
            month = _MONTHS[w]
    return None if year is None else (year, month)


def series_name(title: str) -> str:
    """``title`` without its period words, casefolded: what a series' titles share."""
    return " ".join(w.casefold() for w in TITLE_WORD.findall(title) if not PERIOD_WORD.match(w))


def in_period_order(items: Sequence[T], title_of: Callable[[T], str]) -> list[T]:
    """``items`` with the members of each series (two or more items whose titles name a
    period and are the same without it) in time order, in the places the series'
    members held; every other item keeps its place."""
    when = {i: period_of(title_of(item)) for i, item in enumerate(items)}
    series: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        if when[i] is not None:
            series.setdefault(series_name(title_of(item)), []).append(i)
    out = list(items)
    for places in series.values():
        if len(places) < 2:
            continue
        for place, i in zip(places, sorted(places, key=lambda i: when[i]), strict=True):
            out[place] = items[i]
    return out
