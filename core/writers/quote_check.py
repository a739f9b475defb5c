"""The LLM writer's quotes checked against its sources.

The model quotes, per cited sentence and source, the text of that source supporting the
sentence (``SectionText.quotes``). A quote counts when its source holds it verbatim or
nearly (typography, markup, spacing and case aside, every figure of it there); only the
quotes found reach ``Draft.quotes``, and a note counts those not found.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.domain.text import clean_inline, figures
from core.writers.base import Draft
from core.writers.replies import SentenceQuote

log = logging.getLogger("evergreen.llm")

QUOTE_MATCH = 90.0  # fuzz.partial_ratio of a quote within its source to count as found
QUOTE_MIN_CHARS = 8  # a shorter quote proves nothing
SENTENCE_MATCH = 85.0  # fuzz.ratio for a quote's sentence to name a sentence of the body

_TYPOGRAPHY = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
     "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u2026": "..."}
)  # fmt: skip
_MARKUP = re.compile(r"[*_`#>|~]+")
_ELLIPSIS = re.compile(r"\s*\[?\.\.\.\]?\s*")


def _plain(text: str) -> str:
    """Text as compared for quoting: markup and [n] markers gone, typography and spacing
    normalised, case folded."""
    text = _MARKUP.sub(" ", clean_inline(text.translate(_TYPOGRAPHY)))
    return " ".join(text.split()).casefold()


def _found(quote: str, source: str) -> bool:
    """Is ``quote`` (plain) in ``source`` (plain), verbatim or nearly (fuzz.partial_ratio
    >= QUOTE_MATCH, with every figure of the quote there)? An elided quote ("a ... b") must
    have each of its parts there."""
    parts = [p.strip(" .,;:\"'") for p in _ELLIPSIS.split(quote)]
    parts = [p for p in parts if p]
    if not parts or sum(len(p) for p in parts) < QUOTE_MIN_CHARS:
        return False
    for part in parts:
        if part in source:
            continue
        if len(part) < QUOTE_MIN_CHARS or len(part) > len(source):
            return False
        found = fuzz.partial_ratio_alignment(part, source, score_cutoff=QUOTE_MATCH)
        if found is None:
            return False
        # a near match forgives typos and spacing, never a figure the source does not have
        near = source[max(0, found.dest_start - 12) : found.dest_end + 12]
        if not _figures(part) <= _figures(near):
            return False
    return True


def _figures(text: str) -> set[str]:
    return {m.replace(",", "") for m in figures(text)}


def _body_sentence(
    said: str, marker: int, units: Sequence[tuple[str, str, set[int]]]
) -> str | None:
    """The sentence of the body (as written there) that the model's ``said`` names, among
    those citing ``marker``: the same words, else the closest by fuzz.ratio."""
    key = sentence_key(said)
    if not key:
        return None
    candidates = [(sentence, k) for sentence, k, markers in units if marker in markers]
    for sentence, k in candidates:
        if k == key:
            return sentence
    best = process.extractOne(
        key, [k for _s, k in candidates], scorer=fuzz.ratio, score_cutoff=SENTENCE_MATCH
    )
    return candidates[best[2]][0] if best else None


def with_quotes(draft: Draft, quotes: Sequence[SentenceQuote], sources: dict[int, str]) -> Draft:
    """``draft`` with the model's quotes that its sources hold, one per cited sentence and
    source, and a note counting the quotes not found in their sources."""
    units = [
        (sentence, sentence_key(sentence), set(markers))
        for _pos, sentence, markers in cited_sentences(draft.body)
    ]
    plain: dict[int, str] = {}
    kept: dict[tuple[str, int], dict[str, object]] = {}
    missed: list[int] = []
    for q in quotes:
        if q.source_id not in sources:
            log.info("quote of source [%d], which the writer was not given: ignored", q.source_id)
            continue
        sentence = _body_sentence(q.sentence, q.source_id, units)
        if sentence is None or (sentence, q.source_id) in kept:
            continue  # a sentence the section does not have (or no longer cites it)
        if q.source_id not in plain:
            plain[q.source_id] = _plain(sources[q.source_id])
        if not _found(_plain(q.quote), plain[q.source_id]):
            missed.append(q.source_id)
            continue
        quote = " ".join(q.quote.split())
        kept[(sentence, q.source_id)] = {
            "sentence": sentence,
            "marker": q.source_id,
            "quote": quote,
        }
    draft.quotes = list(kept.values())
    if missed:
        ids = ", ".join(f"[{m}]" for m in sorted(set(missed)))
        what = (
            f"{len(missed)} quotes not found in their sources (sentences citing {ids})"
            if len(missed) > 1
            else f"1 quote not found in its source (sentence citing {ids})"
        )
        draft.notes.append(what)
    return draft
