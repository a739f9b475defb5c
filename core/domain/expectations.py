"""Expectations a text states with a date: "construction due to start in August 2026",
"commercial operation expected in Q4 2026", "will open by mid-2027".

Once the date has passed, such a line no longer says what holds: the page may simply not
have been updated. A report that repeats it as a current fact ("Funded; construction
due to start in August 2026", read in October) is true to its source and still
misleading, so the key facts say which of their values are past their date
(:func:`past_due`). Only an expectation stated as standing is one: "was expected to open
in 2025" reports an old plan, not a current one.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

from core.domain.citations import strip_citations
from core.domain.sentences import cited_sentences

_MONTHS = {name.casefold(): i for i, name in enumerate(calendar.month_name) if name} | {
    name.casefold(): i for i, name in enumerate(calendar.month_abbr) if name
}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_PARTS = {  # month a part of a year ends with
    "early": 4,
    "the start of": 4,
    "the beginning of": 4,
    "mid": 8,
    "the middle of": 8,
    "late": 12,
    "the end of": 12,
    "end of": 12,
    "the first half of": 6,
    "the second half of": 12,
    "h1": 6,
    "h2": 12,
}
_PART = r"(?:" + "|".join(re.escape(p) for p in sorted(_PARTS, key=len, reverse=True)) + r")"

#: a date or a period, each form a named group
_WHEN = (
    rf"(?P<iso>{_YEAR}-\d{{2}}-\d{{2}})"
    rf"|(?P<dmy>{_DAY}\s+{_MONTH}\s+{_YEAR})"
    rf"|(?P<mdy>{_MONTH}\s+{_DAY},?\s+{_YEAR})"
    rf"|(?P<my>{_MONTH}\s+{_YEAR})"
    rf"|(?P<q>(?:Q[1-4]|the\s+(?:first|second|third|fourth)\s+quarter\s+of)\s+{_YEAR})"
    rf"|(?P<part>{_PART}[-\s]\s*{_YEAR})"
    rf"|(?P<y>{_YEAR})"
)
_WEEKDAY = r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+)?"
_LEAD = r"(?:in|on|by|for|from|before|until|around|at|during|within)\s+(?:the\s+)?" + _WEEKDAY
_STANDING = r"(?<!\bwas )(?<!\bwere )(?<!\bbeen )"  # not an old plan reported as such
#: "due to start in …", "set for release on …", "expected in …", "scheduled for …"
_EXPECTED = re.compile(
    _STANDING + r"\b(?:"
    r"(?:due|expected|scheduled|planned|set|slated|forecast|projected|targeted)\s+"
    r"(?:to|for)\s+[a-z]+(?:\s+[a-z]+){0,4}?\s+" + _LEAD + r"|"
    r"(?:due|expected|slated)\s+" + _LEAD + r"|"
    r"(?:scheduled|planned|set|targeted)\s+(?:for|by)\s+(?:the\s+)?" + _WEEKDAY + r")"
    rf"(?:{_WHEN})\b",
    re.I,
)
#: "will open in …", "will not start operating until …"
_WILL = re.compile(r"\bwill\s+(?:[a-z]+\s+){1,5}?" + _LEAD + rf"(?:{_WHEN})\b", re.I)


@dataclass(frozen=True)
class Expectation:
    """What is expected (the phrase as written) and the last day of the period it names."""

    phrase: str
    by: date


def _last_day(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _month(text: str) -> int:
    return _MONTHS[re.search(_MONTH, text, re.I).group(0).rstrip(".").casefold()]  # type: ignore[union-attr]


def _end(m: re.Match[str]) -> date | None:
    """The last day of the date or period ``m`` matched (None if it is no date)."""
    text = next(v for k in ("iso", "dmy", "mdy", "my", "q", "part", "y") if (v := m.group(k)))
    year = int(re.findall(_YEAR, text)[-1])
    try:
        if m.group("iso"):
            return date.fromisoformat(text)
        if m.group("dmy") or m.group("mdy"):
            day = int(re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\d)", text).group(1))  # type: ignore[union-attr]
            return date(year, _month(text), day)
    except ValueError:
        return None
    if m.group("my"):
        return _last_day(year, _month(text))
    if m.group("q"):
        q = re.search(r"Q([1-4])", text)
        n = int(q.group(1)) if q else _QUARTERS[text.split()[1].casefold()]
        return _last_day(year, 3 * n)
    if m.group("part"):
        part = re.sub(r"[-\s]+\d{4}$", "", text).strip().casefold()
        return _last_day(year, _PARTS.get(" ".join(part.split()), 12))
    return date(year, 12, 31)


#: "due to lack of interest in 2019", "due to the change in 2024": a cause, not a plan
_CAUSE = re.compile(
    r"due\s+to\s+(?:(?:the|a|an|its|their|his|her|our|this|that|these|those|lack)\b|.*\bof\b)",
    re.I,
)


def expectations(text: str) -> list[Expectation]:
    """The dated expectations ``text`` states, in order."""
    found: list[Expectation] = []
    for pattern in (_EXPECTED, _WILL):
        for m in pattern.finditer(text):
            by = _end(m)
            if by is not None and not _CAUSE.match(m.group(0)):
                found.append(Expectation(m.group(0), by))
    return sorted(found, key=lambda e: text.find(e.phrase))


def past_due(text: str, as_of: date) -> list[Expectation]:
    """The expectations ``text`` states whose date is over by ``as_of``."""
    return [e for e in expectations(text) if e.by < as_of]


def past_due_notes(body: str, as_of: date) -> list[str]:
    """One line per cited sentence of ``body`` stating a plan whose date is over by
    ``as_of``: "Past its date on 2027-01-05: “commercial operation expected in Q4 2026”
    [7]"."""
    notes = []
    for _pos, sentence, markers in cited_sentences(body):
        for e in past_due(strip_citations(sentence), as_of):
            cites = "".join(f"[{m}]" for m in markers)
            notes.append(f"Past its date on {as_of.isoformat()}: “{e.phrase}” {cites}")
    return notes
