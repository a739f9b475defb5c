"""Claim anchors: the passages of a page that support a cited sentence.

A cited sentence is a *claim*; its evidence is one or more *passages* of one snapshot
(:mod:`core.domain.passages`), each kept as a selector (:mod:`core.domain.selectors`).
:func:`anchor_claim` finds the passages that support a sentence: a verbatim quote
directly; an analyst's paraphrase by weighted token cover (numbers weigh most, then
names), one passage per fact when a sentence combines several lines of a page. Re-finding
them in a newer text is :mod:`core.domain.relocate`.

Everything here is pure text: no database, no network.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from core.domain.citations import strip_citations
from core.domain.declared_fields import field_value, stated_fields
from core.domain.passage_changes import STATUS_STEMS
from core.domain.passages import Passage, normalise, passages, token_weights
from core.domain.selectors import Selector
from core.domain.sentences import unnamed
from core.domain.text import stem

MAX_PASSAGES = 4  # at most this many passages support one claim
SUPPORT_MIN = 0.5  # weighted share of a sentence's words its passages must cover
QUOTE_MIN = 92.0  # fuzz.ratio for a sentence to count as a quote of one passage


@dataclass
class Anchoring:
    """The passages supporting one claim (sentence, one source)."""

    selectors: list[Selector] = field(default_factory=list)
    score: float = 0.0  # weighted share of the sentence's words the passages cover
    supported: bool = False
    missing: list[str] = field(default_factory=list)  # figures of the sentence not found
    # fields the sentence states that the page states otherwise: (stated, page's passage)
    contradicted: list[tuple[str, Passage]] = field(default_factory=list)


def _check_fields(sentence: str, content: str) -> tuple[list[Passage], list[tuple[str, Passage]]]:
    """The page's passages declaring the fields the sentence states: agreeing, contradicting."""
    agree: list[Passage] = []
    contra: list[tuple[str, Passage]] = []
    declared: dict[str, Passage] = {}
    for p in passages(content):
        if p.field is not None:
            declared.setdefault(normalise(p.field[0]), p)
    for label, value in stated_fields(sentence):
        p = declared.get(normalise(label))
        if p is None or p.field is None:
            continue
        if field_value(value) == field_value(p.field[1]):
            agree.append(p)
        else:
            contra.append((f"{label}: {value}", p))
    return agree, contra


def _quote_passages(content: str, quote: str) -> list[Passage]:
    """The passages holding ``quote`` (verbatim or nearly), or []."""
    key = normalise(quote)
    if len(key) < 8:
        return []
    found = [p for p in passages(content) if key in p.norm or (len(p.norm) > 12 and p.norm in key)]
    if found and any(key in p.norm for p in found):
        return [next(p for p in found if key in p.norm)]
    if found and sum(len(p.norm) for p in found) >= 0.8 * len(key):
        return found[:MAX_PASSAGES]
    best = process.extractOne(
        key, [p.norm for p in passages(content)], scorer=fuzz.ratio, score_cutoff=QUOTE_MIN
    )
    return [passages(content)[best[2]]] if best else []


def anchor_claim(sentence: str, content: str, quote: str | None = None) -> Anchoring:
    """Find the passages of ``content`` that support ``sentence`` (its [n] markers ignored).

    ``quote`` is what the writer says it quoted: used first when it is found in the page.
    A sentence is supported when its passages cover at least SUPPORT_MIN of its weighted
    words and every figure in it.
    """
    if not content.strip():
        return Anchoring(missing=["(empty page)"])
    sentence = html.unescape(sentence)  # a body keeps "<" escaped ("&lt;"), a page does not
    sentence = unnamed(sentence)  # "The PEP “Title” defines …": "This PEP defines …"
    row = _declared_row(sentence, content)
    if row is not None:
        return row
    weights = token_weights(sentence)
    total = sum(weights.values()) or 1.0
    figures = {t for t in weights if t[0].isdigit()}
    chosen: list[Passage] = []
    agree, contra = _check_fields(sentence, content)
    stated = stated_fields(sentence)
    if stated and len(agree) + len(contra) == len(stated):
        # a summary of what the page declares ("Title — Status: X; Type: Y"): its support
        # is exactly those declarations, plus the passage naming the title
        head = strip_citations(sentence).partition(" — ")[0]
        chosen = _quote_passages(content, head) or _cover(head, token_weights(head), content)[:1]
    else:
        if quote:
            chosen = _quote_passages(content, quote)
        if not chosen:
            chosen = _quote_passages(content, sentence)
        if not chosen:
            chosen = _cover(sentence, weights, content)
    for p in agree + [p for _stated, p in contra]:
        if p not in chosen:
            chosen.append(p)
    chosen.sort(key=lambda p: p.start)
    covered = set().union(*(p.tokens for p in chosen)) if chosen else set()
    if stated and len(agree) + len(contra) == len(stated):
        # declared values are compared as values ("2018-08-24" is "24-Aug-2018"): only
        # the title's own figures must appear as written
        head = strip_citations(sentence).partition(" — ")[0]
        figures = {t for t in token_weights(head) if t[0].isdigit()}
        covered |= {t for t in weights if t[0].isdigit() and t not in figures} if agree else set()
    summary = bool(stated) and len(agree) + len(contra) == len(stated)
    if summary:  # judged on its declarations: the title may live only in the page's metadata
        tail = strip_citations(sentence).partition(" — ")[2] or strip_citations(sentence)
        weights = token_weights(tail) or weights
        total = sum(weights.values()) or 1.0
    score = sum(w for t, w in weights.items() if t in covered) / total
    missing = sorted(figures - covered)
    selectors = [Selector.at(content, p.start, p.end) for p in chosen]
    supported = bool(chosen) and score >= SUPPORT_MIN and not missing and not contra
    return Anchoring(selectors, round(score, 3), supported, missing, contra)


def _declared_row(sentence: str, content: str) -> Anchoring | None:
    """A table row whose cells after the first are each a value the page declares
    ("| Copperline Storage Park | Approved [8] |" ↔ "Status: Approved"; a key-facts row):
    supported by those declarations and the passage naming the item, if any (the item
    may be only the page's title). None when the unit is not such a row."""
    text = strip_citations(sentence).strip()
    if not text.startswith("|"):
        return None
    cells = [c.strip() for c in text.strip("|").split("|")]
    # a status cell may carry its date: "Withdrawn since 31-Jan-2025"
    values = [v for c in cells[1:] for v in c.split(" since ") if v and v not in ("—", "-")]
    if len(cells) < 2 or not values:
        return None
    declared: dict[str, Passage] = {}
    status: Passage | None = None  # the page's own status (or stage) field
    for p in passages(content):
        if p.field is not None:
            declared.setdefault(field_value(p.field[1]), p)
            if status is None and normalise(p.field[0]) in _STATUS_LABELS:
                status = p
    hits = [declared.get(field_value(v)) for v in values]
    if not all(hits):
        said, page = _status_word(values[0]), status and _status_word(status.field[1])
        if status is not None and said and page and said != page:
            # the row gives the item a status its page does not declare: contradicted,
            # whatever else of the row the page says (its date, its title)
            selector = Selector.at(content, status.start, status.end)
            return Anchoring([selector], 0.0, False, [], [(values[0], status)])
        return None
    chosen = _quote_passages(content, cells[0])[:1] + [p for p in hits if p is not None]
    chosen = sorted(dict.fromkeys(chosen), key=lambda p: p.start)
    return Anchoring([Selector.at(content, p.start, p.end) for p in chosen], 1.0, True, [], [])


_STATUS_LABELS = frozenset({"status", "stage"})


def _status_word(value: str) -> str | None:
    """The status a cell or a field value opens with, stemmed ("Implemented (Swift 5.5)",
    "**Implemented (Swift 5.5)** ([Acceptance post](…))" → "implement"); None when it
    opens with no status word."""
    words = re.findall(r"[A-Za-z]+", value)
    first = stem(words[0].casefold()) if words else ""
    return first if first in STATUS_STEMS else None


def _cover(sentence: str, weights: dict[str, float], content: str) -> list[Passage]:
    """Greedy weighted cover of the sentence's words by passages (one per fact)."""
    key = normalise(sentence)
    wanted = set(weights)
    candidates = [p for p in passages(content) if p.tokens & wanted]
    chosen: list[Passage] = []
    covered: set[str] = set()
    for _ in range(MAX_PASSAGES):
        best: tuple[float, int, Passage] | None = None
        for p in candidates:
            if p in chosen:
                continue
            shared = p.tokens & wanted
            gain = sum(weights[t] for t in shared - covered)
            if gain < 2.0:
                continue
            precision = len(shared) / max(1, len(p.tokens))
            value_said = p.field is not None and normalise(p.field[1]) in key
            if precision < 0.3 and not value_said:
                continue
            rank = gain * (0.5 + precision) + (2.0 if value_said else 0.0)
            if best is None or rank > best[0] or (rank == best[0] and p.start < best[2].start):
                best = (rank, -p.start, p)
        if best is None:
            break
        chosen.append(best[2])
        covered |= best[2].tokens & wanted
    # Every figure of the sentence needs a passage that states it.
    for figure in sorted(t for t in wanted - covered if t[0].isdigit()):
        holders = [p for p in candidates if figure in p.tokens and p not in chosen]
        if holders:
            best_holder = max(holders, key=lambda p: (len(p.tokens & wanted), -p.start))
            chosen.append(best_holder)
            covered |= best_holder.tokens & wanted
    # A declared fact whose value the sentence states ("is in construction" ↔ Status) is
    # support too, and the passage that flags a change of that status.
    for p in candidates:
        if p not in chosen and p.field is not None and len(chosen) < MAX_PASSAGES + 2:
            value = normalise(p.field[1])
            if len(value) >= 4 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", key):
                chosen.append(p)
    for p in passages(content):  # status-like values without shared stems
        if p in chosen or p.field is None or len(chosen) >= MAX_PASSAGES + 2:
            continue
        value = normalise(p.field[1])
        if 4 <= len(value) <= 40 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", key):
            chosen.append(p)
    return sorted(chosen, key=lambda p: p.start)
