"""Passages: a page cut into the units a claim's support is quoted from.

A passage is a sentence of prose, a header or bullet line, a table row or a
``Label: value`` field, with its offsets in the page, its comparison form (markup
removed, casefolded) and its comparable words (numbers, content-word stems).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.domain.citations import strip_citations
from core.domain.declared_fields import field_of
from core.domain.sentences import sentence_spans
from core.domain.text import STOP, clean_inline, stem

_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+", re.UNICODE)
_UNIT_LINE = re.compile(r"^\s*(?:[-*+•]\s|\d{1,3}[.)]\s|#{1,6}\s|\||[A-Za-z][\w -]{0,40}:(?:\s|$))")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s")
_LABEL_ONLY = re.compile(r"^[A-Za-z][\w -]{0,40}:\s*$")
_MARKUP_ONLY = re.compile(r"^\s*[=\-~^\"'`#*+_.:|<>]*\s*$")


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


def token_weights(sentence: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    words = _WORD.findall(clean_inline(sentence))
    for i, w in enumerate(words):
        if not (w[0].isdigit() or (len(w) > 2 and w.casefold() not in STOP)):
            continue
        t = _token(w)
        weight = 3.0 if w[0].isdigit() else 2.0 if (w[0].isupper() and i > 0) else 1.0
        weights[t] = max(weights.get(t, 0.0), weight)
    return weights


def make_passage(content: str, start: int, end: int) -> Passage | None:
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
                p = make_passage(content, a, b)
                if p is not None:
                    out.append(p)
            block = None

    def flush_unit() -> None:
        nonlocal unit
        if unit is not None:
            p = make_passage(content, *unit)
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
