"""Plain words for the analyst: what changed in the source passages a claim rests on, one
sentence per changed claim, evidence reasons without category words, and source claim
units without Markdown or table syntax."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from core.domain.text import strip_links
from core.states import AnchorOutcome, ClaimOutcome

#: a declared field's difference as core.domain.passage_changes says it: "Capacity: 100 MW → 160 MW"
_FIELD_DIFF = re.compile(r"^(?P<label>[A-Za-z][\w ()/&'-]{0,48}?): (?P<change>[^:→]+→.+)$")


def claim_change_text(check: dict[str, Any]) -> str:
    """What changed in the passages a claim relied on, in plain words: the differing
    figures, dates and statuses, or that the passage is gone."""
    diffs = _differences(check)
    gone = _gone_passages(check)
    parts = ["; ".join(diffs)] if diffs else []
    if gone:
        parts.append(_gone_words(gone))
    if not parts:
        if check.get("outcome") == ClaimOutcome.GONE:
            return "the passage it cites is gone"
        return "the passage it cites was reworded"
    return "; ".join(parts)


def _differences(check: dict[str, Any]) -> list[str]:
    diffs: list[str] = []
    for passage in check.get("passages") or []:
        if passage.get("outcome") == AnchorOutcome.GONE or passage.get("new") is None:
            continue
        for d in passage.get("differences") or []:
            if d and str(d) not in diffs:
                diffs.append(str(d))
    return diffs


def _gone_passages(check: dict[str, Any]) -> int:
    return sum(
        1
        for p in check.get("passages") or []
        if p.get("outcome") == AnchorOutcome.GONE or p.get("new") is None
    )


def _gone_words(n: int) -> str:
    return "the passage it cites is gone" if n == 1 else f"{n} passages it cites are gone"


def short_title(title: str) -> str:
    """A page title without its subtitle: "Tessaly Storage Price Index: quarterly tracker"
    → "Tessaly Storage Price Index" (a title that is only a subtitle is kept whole)."""
    head, sep, _tail = title.partition(": ")
    return head.strip() if sep and len(head.split()) >= 2 else title.strip()


def _lower_label(label: str) -> str:
    """ "Capacity" → "capacity"; acronyms ("HGA rating") keep their capitals."""
    if len(label) > 1 and label[1].isupper():
        return label
    return label[:1].lower() + label[1:]


def short_date(when: datetime | str | None, *, year: bool = False) -> str:
    """ "2026-04-15" → "15 Apr" (with the year when asked); "" for no date."""
    if not when:
        return ""
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when[:10])
        except ValueError:
            return when
    text = f"{when.day} {when:%b}"
    return f"{text} {when.year}" if year else text


def date_span(old: datetime | str | None, new: datetime | str | None) -> str:
    """ "15 Jan → 15 Apr" (years shown when they differ); one date alone when the other
    is missing or the same."""
    a, b = _as_date(old), _as_date(new)
    if a is None or b is None or a.date() == b.date():
        one = a or b
        return short_date(one, year=True) if one else ""
    both_years = a.year != b.year
    return f"{short_date(a, year=both_years)} → {short_date(b, year=both_years)}"


def _as_date(value: datetime | str | None) -> datetime | None:
    if isinstance(value, datetime) or value is None:
        return value
    try:
        return datetime.fromisoformat(value[:10])
    except ValueError:
        return None


def claim_sentence(
    check: dict[str, Any],
    title: str,
    *,
    dates: str = "",
    page_gone: bool = False,
) -> str:
    """One plain sentence for one changed claim: what its source says now, next to what
    it said, with the source's marker and snapshot dates, e.g.
    "Kestrel Flats Storage Project capacity: 100 MW / 400 MWh → 160 MW / 650 MWh
    (source [7], 15 Jan → 15 Apr)"."""
    subject = short_title(title) or "The source"
    marker = check.get("marker")
    where = f"source [{marker}]" + (f", {dates}" if dates else "")
    if page_gone:
        return f"{subject}: the page was removed ({where})"
    diffs = _differences(check)
    gone = _gone_passages(check)
    head = f"{subject}: "
    if diffs:
        field = _FIELD_DIFF.match(diffs[0])
        if field:
            head = f"{subject} {_lower_label(field['label'])}: "
            diffs[0] = field["change"]
    words = "; ".join(diffs)
    if gone:
        words = f"{words}; {_gone_words(gone)}" if words else _gone_words(gone)
    if not words:
        words = claim_change_text(check)
    return f"{head}{words} ({where})"


# -- evidence reasons --------------------------------------------------------------------
_LEGACY_TOKEN = re.compile(r"^(?:date|number|version) (?P<rest>.+)$")
_LEGACY_DECISION = re.compile(r"^decision word: (?P<old>.+?) → (?P<new>.+)$")
_QUOTED_WORD = re.compile(r"'([^']*)'")


def plain_reason(reason: str) -> str:
    """An evidence reason as the analyst reads it: "header Status: Draft → Final" →
    "Status: Draft → Final"; reasons stored in the older category form ("number $58 →
    $51", "decision word: 'draft' → (none)") lose their category words."""
    text = str(reason).strip()
    if text.startswith("header "):
        return text.removeprefix("header ")
    m = _LEGACY_DECISION.match(text)
    if m:
        old = ", ".join(f"“{w}”" for w in _QUOTED_WORD.findall(m["old"]))
        new = ", ".join(f"“{w}”" for w in _QUOTED_WORD.findall(m["new"]))
        if old and new:
            return f"{old} → {new}"
        return f"{old} dropped" if old else f"now adds {new}"
    if text.startswith("text: "):
        return text.removeprefix("text: ").replace("new prose", "new text")
    m = _LEGACY_TOKEN.match(text)
    if m:
        rest = m["rest"]
        if rest.endswith(" removed"):
            return rest.removesuffix(" removed") + " dropped"
        if rest.endswith(" added"):
            return "now adds " + rest.removesuffix(" added")
        return rest
    return text


# -- source claim units ------------------------------------------------------------------
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]")
_EMPHASIS = re.compile(r"\*\*|__|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")


def plain_unit(text: str | None) -> str:
    """A sentence unit of a source page as plain text: no heading marks, list bullets,
    table pipes ("| Q1 2026 | 134 |" → "Q1 2026 · 134"), link syntax or emphasis; a bare
    web address reads "(link)"."""
    if not text:
        return ""
    s = " ".join(str(text).split())
    if _TABLE_RULE.match(s):
        return ""
    if s.startswith("|") or s.count(" | ") >= 1 and s.endswith("|"):
        cells = [c.strip() for c in s.strip().strip("|").split("|")]
        s = " · ".join(c for c in cells if c)
    s = _HEADING.sub("", s)
    s = _BULLET.sub("", s)
    s = strip_links(s)
    s = _URL.sub("(link)", s)
    s = _EMPHASIS.sub("", s)
    return " ".join(s.split())
