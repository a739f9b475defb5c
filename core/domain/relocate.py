"""Relocating an anchor: re-finding one selector in a newer text, and how its passage changed.

:func:`locate` tries the exact quote first (``intact`` at its place or with its context,
else ``moved``), then the quote's own context (``prefix`` … ``suffix``), then the most
similar passage near the old position, then diff-match-patch's fuzzy ``match_main`` with
the position as location hint. A passage found but different is ``edited`` when a figure,
date, status or key fact differs (:mod:`core.domain.passage_changes`) and ``reworded``
otherwise; nothing close is ``gone``.

Everything here is pure text: no database, no network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from diff_match_patch import diff_match_patch
from rapidfuzz import fuzz, process

from core.domain.declared_fields import field_of
from core.domain.passage_changes import passage_differences
from core.domain.passages import Passage, make_passage, normalise, passage_at, passages
from core.domain.selectors import Selector
from core.domain.text import clean_inline
from core.states import AnchorOutcome

EDIT_MIN = 60.0  # fuzz.ratio for a passage to count as an edit of the old one


@dataclass
class Located:
    """One selector re-found in a newer text."""

    outcome: AnchorOutcome
    selector: Selector | None  # where it is now (None when gone)
    old: str  # the passage as it was
    new: str | None  # the passage as it is now
    differences: list[str] = field(default_factory=list)  # "100 MW → 160 MW" (edited only)

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "old": self.old,
            "new": self.new,
            "differences": list(self.differences),
            "selector": self.selector.as_dict() if self.selector else None,
        }


def _context_score(content: str, at: int, sel: Selector) -> int:
    before = content[max(0, at - len(sel.prefix)) : at]
    after = content[at + len(sel.exact) : at + len(sel.exact) + len(sel.suffix)]
    score = 0
    for a, b in zip(reversed(before), reversed(sel.prefix), strict=False):
        if a != b:
            break
        score += 1
    for a, b in zip(after, sel.suffix, strict=False):
        if a != b:
            break
        score += 1
    return score


def _find_exact(content: str, sel: Selector) -> tuple[int, bool] | None:
    """Best occurrence of the exact quote, and whether its context is the old one."""
    hits = []
    at = content.find(sel.exact)
    while at != -1 and len(hits) < 50:
        hits.append(at)
        at = content.find(sel.exact, at + 1)
    if not hits:
        return None
    full = len(sel.prefix.strip()) + len(sel.suffix.strip())

    def rank(h: int) -> tuple[int, int]:
        return (-_context_score(content, h, sel), abs(h - sel.start) if sel.start >= 0 else 0)

    best = min(hits, key=rank)
    ctx = _context_score(content, best, sel)
    end = best + len(sel.exact)
    # the quote must still end (and start) where it did: "Status: Accepted" followed by
    # " with modifications" is a longer value at the same place, not the old passage
    bounded = content[end : end + 1] == sel.suffix[:1] and (
        not sel.prefix or content[best - 1 : best] == sel.prefix[-1:]
    )
    same_place = bounded and (
        best == sel.start or ctx >= len(sel.prefix) + len(sel.suffix) or (ctx >= full and full > 0)
    )
    return best, same_place or (len(hits) == 1 and not full)


def _by_context(content: str, sel: Selector) -> Passage | None:
    """The passage between the old prefix and suffix, when both are still there."""
    prefix, suffix = sel.prefix.strip(), sel.suffix.strip()
    if min(len(prefix), len(suffix)) < 4 or len(prefix) + len(suffix) < 20:
        return None
    best: Passage | None = None
    at = content.find(prefix)
    while at != -1:
        begin = at + len(prefix)
        stop = content.find(suffix, begin, begin + 4 * len(sel.exact) + 200)
        if stop != -1:
            # the span may hold the old passage's successor and new neighbours: take the
            # passage in it that is most like the old one
            inside = [q for q in passages(content) if q.start >= begin and q.end <= stop]
            p = (
                max(inside, key=lambda q: fuzz.ratio(q.norm, normalise(sel.exact)))
                if inside
                else make_passage(content, begin, stop)
            )
            if p is not None and (
                best is None or abs(p.start - sel.start) < abs(best.start - sel.start)
            ):
                best = p
        at = content.find(prefix, at + 1)
    return best


def _by_field(content: str, sel: Selector) -> Passage | None:
    """For a declared field ("Status: Draft"), the passage declaring the same field now
    (the one nearest the old position when several do)."""
    old = field_of(sel.exact.strip())
    if old is None:
        return None
    label = normalise(old[0])
    same = [p for p in passages(content) if p.field and normalise(p.field[0]) == label]
    if not same:
        return None
    return min(same, key=lambda p: abs(p.start - sel.start) if sel.start >= 0 else p.start)


def _similar(content: str, sel: Selector) -> Passage | None:
    key = normalise(sel.exact)
    pool = passages(content)
    scored = process.extract(
        key, [p.norm for p in pool], scorer=fuzz.ratio, score_cutoff=EDIT_MIN, limit=5
    )
    if not scored:
        return None
    top = scored[0][1]
    near = [pool[i] for _, s, i in scored if s >= top - 3]
    return min(near, key=lambda p: abs(p.start - sel.start) if sel.start >= 0 else 0)


def _fuzzy_match(content: str, sel: Selector) -> Passage | None:
    """diff-match-patch's match_main with the old position as the location hint."""
    pattern = sel.exact.strip()[:64]
    if len(pattern) < 8 or not content:
        return None
    dmp = diff_match_patch()
    dmp.Match_Threshold = 0.35
    dmp.Match_Distance = 5000
    loc = min(max(sel.start, 0), len(content))
    try:
        at = dmp.match_main(content, pattern, loc)
    except ValueError:
        return None
    if at < 0:
        return None
    p = passage_at(content, at)
    if p is None or fuzz.ratio(normalise(sel.exact), p.norm) < EDIT_MIN - 10:
        return None
    return p


def _rewrapped(content: str, passage: Passage, exact: str) -> tuple[int, int] | None:
    """(start, end) of ``exact``'s words inside ``passage``, whatever the whitespace
    between them (lines re-wrapped, indentation changed), or None."""
    words = exact.split()
    if not words or field_of(clean_inline(exact).lstrip("-*+• ")) is not None:
        return None  # a declared value is compared as a value, never by containment
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.compile(pattern).search(content, passage.start, passage.end)
    if m is None:
        return None
    rest = content[m.end() : passage.end]
    if not (exact.rstrip()[-1:] in ".!?" or not rest.strip() or rest[:1] == "\n"):
        return None  # "approved" inside "approved by nobody": the sentence goes on
    return m.start(), m.end()


def locate(sel: Selector, content: str) -> Located:
    """Where ``sel`` is in ``content`` now, and how its passage changed.

    The quote with its own context first (intact); then the old context around other
    text (the passage at its place was edited — even when the same words stand elsewhere,
    as a repeated "Status: Open" line does); then the quote elsewhere (moved); then the
    most similar passage, then diff-match-patch's fuzzy match (edited or reworded).
    """
    found = _find_exact(content, sel) if sel.exact else None
    if found is not None and found[1]:
        at = found[0]
        return Located(
            AnchorOutcome.INTACT,
            Selector.at(content, at, at + len(sel.exact)),
            sel.exact,
            sel.exact,
        )
    passage = (_by_field(content, sel) or _by_context(content, sel)) if content else None
    if passage is not None and passage.text == sel.exact.strip():
        # the same passage, its neighbours changed
        return Located(
            AnchorOutcome.MOVED,
            Selector.at(content, passage.start, passage.end),
            sel.exact,
            sel.exact,
        )
    if passage is None and found is not None:
        at = found[0]
        return Located(
            AnchorOutcome.MOVED, Selector.at(content, at, at + len(sel.exact)), sel.exact, sel.exact
        )
    if passage is None and content:
        whole = Passage(0, len(content), content, "", frozenset(), None)
        inside = _rewrapped(content, whole, sel.exact)
        if inside is not None:  # the same words elsewhere, lines re-wrapped
            return Located(
                AnchorOutcome.MOVED,
                Selector.at(content, *inside),
                sel.exact,
                content[slice(*inside)],
            )
        passage = _similar(content, sel) or _fuzzy_match(content, sel)
    if passage is None:
        return Located(AnchorOutcome.GONE, None, sel.exact, None)
    inside = _rewrapped(content, passage, sel.exact)
    if inside is not None:
        # the same words, re-wrapped or now part of a longer passage: the claim holds
        return Located(
            AnchorOutcome.MOVED, Selector.at(content, *inside), sel.exact, content[slice(*inside)]
        )
    now = Selector.at(content, passage.start, passage.end)
    differences = passage_differences(sel.exact, passage.text)
    outcome = AnchorOutcome.EDITED if differences else AnchorOutcome.REWORDED
    return Located(outcome, now, sel.exact, passage.text, differences)
