"""Claim anchors: where in a page a cited sentence's support is, and whether it still is.

A cited sentence is a *claim*; its evidence is one or more *passages* of one snapshot
(a sentence of prose, a header or bullet line, a table row). Each passage is kept as a
W3C Web Annotation ``TextQuoteSelector`` (``exact`` + ``prefix`` + ``suffix``) with a
``TextPositionSelector``-style hint (``start``), the way hypothes.is anchors annotations.

- :func:`anchor_claim` finds the passages that support a sentence: a verbatim quote
  directly; an analyst's paraphrase by weighted token cover (numbers weigh most, then
  names), one passage per fact when a sentence combines several lines of a page.
- :func:`locate` re-finds one selector in a newer text: exact quote first (``intact`` at
  its place or with its context, else ``moved``), then the quote's own context
  (``prefix`` … ``suffix``), then the most similar passage near the old position, then
  diff-match-patch's fuzzy ``match_main`` with the position as location hint. A passage
  found but different is ``edited`` when a figure, date, status or key fact differs and
  ``reworded`` otherwise; nothing close is ``gone``.

Everything here is pure text: no database, no network.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from diff_match_patch import diff_match_patch
from rapidfuzz import fuzz, process

from core.citations import strip_citations
from core.keyfacts import normalise_value
from core.sentences import sentence_spans
from core.states import HOLDING_OUTCOMES, AnchorOutcome
from core.text import STOP, clean_inline, stem

CONTEXT = 32  # characters of prefix / suffix kept with a quote
MAX_PASSAGES = 4  # at most this many passages support one claim
SUPPORT_MIN = 0.5  # weighted share of a sentence's words its passages must cover
EDIT_MIN = 60.0  # fuzz.ratio for a passage to count as an edit of the old one
QUOTE_MIN = 92.0  # fuzz.ratio for a sentence to count as a quote of one passage

_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+", re.UNICODE)
_FIELD = re.compile(r"^\s*(?:[-*+•]\s+)?(?:\*\*)?([A-Za-z][\w ()/&'-]{0,60}?)(?:\*\*)?\s*:\s*(.+)$")
_UNIT_LINE = re.compile(r"^\s*(?:[-*+•]\s|\d{1,3}[.)]\s|#{1,6}\s|\||[A-Za-z][\w -]{0,40}:(?:\s|$))")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s")
_LABEL_ONLY = re.compile(r"^[A-Za-z][\w -]{0,40}:\s*$")
_MARKUP_ONLY = re.compile(r"^\s*[=\-~^\"'`#*+_.:|<>]*\s*$")


# --------------------------------------------------------------------------- selectors


@dataclass(frozen=True)
class Selector:
    """A TextQuoteSelector (exact, prefix, suffix) with a position hint (start)."""

    exact: str
    prefix: str = ""
    suffix: str = ""
    start: int = -1

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": "TextQuoteSelector",
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "start": self.start,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Selector:
        return cls(
            exact=str(data.get("exact", "")),
            prefix=str(data.get("prefix", "")),
            suffix=str(data.get("suffix", "")),
            start=int(data.get("start", -1)),
        )

    @classmethod
    def at(cls, content: str, start: int, end: int) -> Selector:
        return cls(
            exact=content[start:end],
            prefix=content[max(0, start - CONTEXT) : start],
            suffix=content[end : end + CONTEXT],
            start=start,
        )


# --------------------------------------------------------------------------- passages


@dataclass(frozen=True)
class Passage:
    start: int
    end: int
    text: str  # the raw slice of the content
    norm: str  # markup removed, casefolded, spaces collapsed
    tokens: frozenset[str]
    field: tuple[str, str] | None  # (label, value) for a "Label: value" line


def normalise(text: str) -> str:
    return " ".join(clean_inline(text).replace("**", "").replace("__", "").split()).casefold()


def sentence_key(sentence: str) -> str:
    """A report sentence compared without its [n] markers, markup or spacing."""
    return normalise(strip_citations(sentence))


def _token(word: str) -> str:
    if word[0].isdigit():
        return word.replace(",", "")
    return stem(word.casefold())


def tokens(text: str) -> list[str]:
    """Comparable words: numbers (thousands separators dropped) and content-word stems."""
    out = []
    for w in _WORD.findall(clean_inline(text)):
        if w[0].isdigit() or (len(w) > 2 and w.casefold() not in STOP):
            out.append(_token(w))
    return out


def field_of(text: str) -> tuple[str, str] | None:
    """(label, value) of a declared field line ("- Status: Approved"), else None.

    A label is at most four words; a longer lead-in before a colon is prose."""
    m = _FIELD.match(text)
    if not m or len(m.group(2)) > 200 or len(m.group(1).split()) > 4:
        return None
    return m.group(1).strip(), m.group(2).strip()


def _make(content: str, start: int, end: int) -> Passage | None:
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    raw = content[start:end]
    norm = normalise(raw)
    if len(norm) < 3 or _MARKUP_ONLY.match(raw):
        return None
    return Passage(start, end, raw, norm, frozenset(tokens(raw)), field_of(raw))


@lru_cache(maxsize=512)
def passages(content: str) -> tuple[Passage, ...]:
    """The passages of a page in document order, with their offsets in ``content``.

    Lines that stand alone (list items, headings, table rows, ``Label: value`` fields)
    are one passage each (a list item keeps its continuation lines, indented or not, up
    to a blank line or the next item); runs of
    prose lines are split into sentences.
    """
    out: list[Passage] = []
    block: tuple[int, int] | None = None  # prose lines being gathered
    unit: tuple[int, int] | None = None  # a list item with its continuation lines

    def flush_block() -> None:
        nonlocal block
        if block is not None:
            for a, b in sentence_spans(content, *block):
                p = _make(content, a, b)
                if p is not None:
                    out.append(p)
            block = None

    def flush_unit() -> None:
        nonlocal unit
        if unit is not None:
            p = _make(content, *unit)
            if p is not None:
                out.append(p)
            unit = None

    pos = 0
    for line in content.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        if not line.strip() or _MARKUP_ONLY.match(line):
            flush_block()
            flush_unit()
            continue
        if (
            unit is not None
            and not _UNIT_LINE.match(line)
            and (
                line[:1] in (" ", "\t")
                or (_LIST_ITEM.match(content[unit[0] : unit[1]]) and not _LABEL_ONLY.match(line))
            )
        ):
            # indented, or Markdown's lazy continuation of a list item (a wrapped line at
            # column 0) — never the next header field ("Post-History:" with no value)
            unit = (unit[0], end)
            continue
        if _UNIT_LINE.match(line):
            flush_block()
            flush_unit()
            unit = (start, end)
            continue
        flush_unit()
        block = (block[0], end) if block is not None else (start, end)
    flush_block()
    flush_unit()
    return tuple(out)


def passage_at(content: str, index: int) -> Passage | None:
    for p in passages(content):
        if p.start <= index < p.end:
            return p
        if p.start > index:
            return p
    return None


# --------------------------------------------------------------------------- anchoring


@dataclass
class Anchoring:
    """The passages supporting one claim (sentence, one source)."""

    selectors: list[Selector] = field(default_factory=list)
    score: float = 0.0  # weighted share of the sentence's words the passages cover
    supported: bool = False
    missing: list[str] = field(default_factory=list)  # figures of the sentence not found
    # fields the sentence states that the page states otherwise: (stated, page's passage)
    contradicted: list[tuple[str, Passage]] = field(default_factory=list)


def stated_fields(sentence: str) -> list[tuple[str, str]]:
    """``Label: value`` pairs a sentence states ("PEP 563 — Status: Accepted; Type: …")."""
    text = clean_inline(strip_citations(sentence)).rstrip(".")
    head, sep, tail = text.partition(" — ")
    parts = tail.split(";") if sep else ([text] if field_of(text) else [])
    out: list[tuple[str, str]] = []
    for part in parts:
        f = field_of(part.strip())
        if f is not None:
            out.append(f)
        elif out:  # a value holding a semicolon ("Funded; construction due in August")
            out[-1] = (out[-1][0], f"{out[-1][1]};{part}")
    return out


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
        if _field_value(value) == _field_value(p.field[1]):
            agree.append(p)
        else:
            contra.append((f"{label}: {value}", p))
    return agree, contra


def _weights(sentence: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    words = _WORD.findall(clean_inline(sentence))
    for i, w in enumerate(words):
        if not (w[0].isdigit() or (len(w) > 2 and w.casefold() not in STOP)):
            continue
        t = _token(w)
        weight = 3.0 if w[0].isdigit() else 2.0 if (w[0].isupper() and i > 0) else 1.0
        weights[t] = max(weights.get(t, 0.0), weight)
    return weights


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
    row = _declared_row(sentence, content)
    if row is not None:
        return row
    weights = _weights(sentence)
    total = sum(weights.values()) or 1.0
    figures = {t for t in weights if t[0].isdigit()}
    chosen: list[Passage] = []
    agree, contra = _check_fields(sentence, content)
    stated = stated_fields(sentence)
    if stated and len(agree) + len(contra) == len(stated):
        # a summary of what the page declares ("Title — Status: X; Type: Y"): its support
        # is exactly those declarations, plus the passage naming the title
        head = strip_citations(sentence).partition(" — ")[0]
        chosen = _quote_passages(content, head) or _cover(head, _weights(head), content)[:1]
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
        figures = {t for t in _weights(head) if t[0].isdigit()}
        covered |= {t for t in weights if t[0].isdigit() and t not in figures} if agree else set()
    summary = bool(stated) and len(agree) + len(contra) == len(stated)
    if summary:  # judged on its declarations: the title may live only in the page's metadata
        tail = strip_citations(sentence).partition(" — ")[2] or strip_citations(sentence)
        weights = _weights(tail) or weights
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
    values = [c for c in cells[1:] if c and c not in ("—", "-")]
    if len(cells) < 2 or not values:
        return None
    declared: dict[str, Passage] = {}
    for p in passages(content):
        if p.field is not None:
            declared.setdefault(_field_value(p.field[1]), p)
    hits = [declared.get(_field_value(v)) for v in values]
    if not all(hits):
        return None
    chosen = _quote_passages(content, cells[0])[:1] + [p for p in hits if p is not None]
    chosen = sorted(dict.fromkeys(chosen), key=lambda p: p.start)
    return Anchoring([Selector.at(content, p.start, p.end) for p in chosen], 1.0, True, [], [])


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


# --------------------------------------------------------------------------- re-anchoring


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
                else _make(content, begin, stop)
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


# --------------------------------------------------------------------------- differences

_DIFF_TOKEN = re.compile(r"[$€£¥]?\w+(?:[.,/:]\w+)*%?|[^\w\s]")
_URLISH = re.compile(r"(?:https?://|www\.)\S+|\]\([^)]*\)")
_STATUS_WORDS = frozenset(
    """proposed draft accepted approved final rejected withdrawn deferred superseded
    deprecated active provisional implemented implementable operational cancelled
    canceled suspended pending planned completed complete released retired obsolete
    construction development review returned postponed paused halted terminated
    expired revoked repealed adopted enacted effective signed vetoed awaiting""".split()
)
STATUS_STEMS = frozenset(stem(w) for w in _STATUS_WORDS)
_NEGATION = frozenset({"not", "no", "never", "without", "cannot", "nor"})
# what is planned or possible against what is: "would apply" → "applies" is news
_MODALS = frozenset({"would", "will", "could", "might", "may", "shall", "should"})


def _is_figure(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _material(words: Iterable[str]) -> bool:
    for w in words:
        lw = w.casefold()
        if _is_figure(w) or lw in _NEGATION or lw in _MODALS or lw in _STATUS_WORDS:
            return True
        if stem(lw) in STATUS_STEMS:
            return True
    return False


_EDGE_PUNCT = " \t,;:.-–—"


def _span_text(text: str, spans: list[tuple[int, int]], i1: int, i2: int) -> str:
    """The words of tokens ``i1:i2`` as the passage writes them ("mid-2026", not
    "mid - 2026"), without punctuation at the edges."""
    if i1 >= i2:
        return ""
    return " ".join(text[spans[i1][0] : spans[i2 - 1][1]].split()).strip(_EDGE_PUNCT)


@dataclass(frozen=True)
class Difference:
    """One material difference between two versions of a passage: the old words and the
    new ones as the passage writes them ("" for a side that has none). ``rewritten``: the
    passage was rewritten as a whole; ``new`` is then all of it."""

    old: str
    new: str
    rewritten: bool = False

    def __str__(self) -> str:
        if self.rewritten:
            return f"now reads “{_clip(self.new)}”"
        if self.old and self.new:
            return f"{self.old} → {self.new}"
        if self.old:
            return f"“{self.old}” dropped"
        if self.new:
            return f"now adds “{self.new}”"
        return "wording changed"


@dataclass
class _Stretch:
    """Tokens ``i1:i2`` of the old passage against ``j1:j2`` of the new one."""

    i1: int
    i2: int
    j1: int
    j2: int
    differs: bool  # a figure, status word or negation differs in it


def _stretches(ta: list[str], tb: list[str]) -> list[_Stretch]:
    """The two passages aligned on their wording with every figure masked: each replaced
    word run, and each run of adjacent figures at aligned places ("Q4 2025"), in order."""
    mask_a = ["#" if _is_figure(t) else t.casefold() for t in ta]
    mask_b = ["#" if _is_figure(t) else t.casefold() for t in tb]
    matcher = difflib.SequenceMatcher(None, mask_a, mask_b, autojunk=False)
    out: list[_Stretch] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            material = _material(ta[i1:i2]) or _material(tb[j1:j2])
            out.append(_Stretch(i1, i2, j1, j2, material))
            continue
        k = 0
        while k < i2 - i1:
            if not _is_figure(ta[i1 + k]):
                k += 1
                continue
            n = k
            while n < i2 - i1 and _is_figure(ta[i1 + n]):
                n += 1
            differs = any(_canon_value(ta[i1 + m]) != _canon_value(tb[j1 + m]) for m in range(k, n))
            out.append(_Stretch(i1 + k, i1 + n, j1 + k, j1 + n, differs))
            k = n
    return out


def _joined(stretches: list[_Stretch]) -> list[_Stretch]:
    """Differing stretches, each merged with the stretches right after it (no word in
    between on either side), so "in October 2025 → on 18 June 2026" is one difference and
    a date keeps its unchanged year ("by mid-2026 → on 18 June 2026")."""
    out: list[_Stretch] = []
    for st in stretches:
        last = out[-1] if out else None
        if last is not None and last.differs and last.i2 == st.i1 and last.j2 == st.j1:
            last.i2, last.j2 = st.i2, st.j2
        else:
            out.append(_Stretch(st.i1, st.i2, st.j1, st.j2, st.differs))
    return [st for st in out if st.differs]


def passage_differences(old: str, new: str) -> list[str]:
    """Material differences between two versions of a passage, in reading order, said in
    plain words (see :func:`passage_changes`): "Capacity: 100 MW → 160 MW",
    "$142/kWh → $134/kWh", "“If adopted” dropped"."""
    return list(dict.fromkeys(str(d) for d in passage_changes(old, new)))


def passage_changes(old: str, new: str) -> list[Difference]:
    """Material differences between two versions of a passage, in reading order.

    A declared field ("Status: Proposed" → "Status: Approved") differs when its value
    does. Otherwise the two passages are aligned on their wording with every figure
    masked, so figures are paired by position ("$142/kWh → $134/kWh", "Q4 2025 → Q1
    2026"), never as sets; replaced word runs count when they hold a figure, a status
    word or a negation, and each is said with the words right after it that changed too,
    as the passage writes them. A passage rewritten as a whole (its wording matches less
    than :data:`REWRITTEN_BELOW`) is one difference quoting the new passage. Link targets
    and URLs are not content.
    """
    a = _URLISH.sub(" ", clean_inline(old))
    b = _URLISH.sub(" ", clean_inline(new))
    fa, fb = field_of(a), field_of(b)
    if fa and fb:
        va, vb = _strip_markup(fa[1]), _strip_markup(fb[1])
        if _canon_value(va) == _canon_value(vb):
            return []
        if normalise(fa[0]) == normalise(fb[0]):
            return [Difference(f"{fa[0]}: {va}", vb)]
        return [Difference(f"{fa[0]}: {va}", f"{fb[0]}: {vb}")]
    ma, mb = list(_DIFF_TOKEN.finditer(a)), list(_DIFF_TOKEN.finditer(b))
    ta, tb = [m.group(0) for m in ma], [m.group(0) for m in mb]
    sa, sb = [m.span() for m in ma], [m.span() for m in mb]
    out = [
        Difference(_span_text(a, sa, st.i1, st.i2), _span_text(b, sb, st.j1, st.j2))
        for st in _joined(_stretches(ta, tb))
    ]
    if len(out) > 1 and _likeness(ta, tb) < REWRITTEN_BELOW:
        # fragments of a rewritten sentence say little: quote what it says now
        return [Difference(" ".join(a.split()), " ".join(b.split()), rewritten=True)]
    return out


#: passages whose wording (figures masked) matches less than this are said as rewritten
REWRITTEN_BELOW = 0.5


def _likeness(ta: list[str], tb: list[str]) -> float:
    mask_a = ["#" if _is_figure(t) else t.casefold() for t in ta]
    mask_b = ["#" if _is_figure(t) else t.casefold() for t in tb]
    return difflib.SequenceMatcher(None, mask_a, mask_b, autojunk=False).ratio()


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _strip_markup(value: str) -> str:
    return " ".join(value.replace("**", "").replace("__", "").replace("`", "").split()).strip()


def _field_value(value: str) -> str:
    """A declared value as compared: its inline markup read first (an rst link
    "`22-Dec-2009 <url>`__" is its text), then emphasis dropped and the value canonised."""
    return _canon_value(_strip_markup(clean_inline(value)))


def _canon_value(value: str) -> str:
    """One value's comparison form: the key-fact reader's (dates as ISO, "Swift 3" =
    "Swift 3.0", a date-only parenthesis dropped), after the inline markup is cleaned."""
    return normalise_value(clean_inline(value))


def holds(outcomes: Sequence[Located]) -> bool:
    return all(o.outcome in HOLDING_OUTCOMES for o in outcomes)
