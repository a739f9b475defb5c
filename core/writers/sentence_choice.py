"""Which sentences of its sources the offline writer quotes in a section.

Candidates are ranked by TF-IDF likeness to the heading (twice) and the question, with a
little weight for their page's title; brochure copy scores a fraction, an author's first
person half. A page's questions, licence notices and pointers at its code or tables ("In
the code above, …") are not quoted, near repeats are left out, a sentence that refers
back ("It is …") comes only with the one before it (one that names its own page, "This
PEP defines …", stands alone: the writer names the page), and one that opens with a
short name ("Saltmarsh was …") brings the sentence introducing the full name when
nothing quoted names it yet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from core.domain.periods import in_period_order
from core.domain.sentences import points_in_page, refers_back, self_reference
from core.domain.text import (
    clean_inline,
    cosine,
    idf_table,
    quotable_sentences,
    same_paragraph,
    terms,
    tfidf,
)
from core.writers.base import Evidence


def select_sentences(
    question: str, heading: str, evidence: Sequence[Evidence], limit: int, most_per_source: int
) -> list[tuple[Evidence, list[str]]]:
    """The sentences of ``evidence`` to quote for a section, up to ``limit``, grouped per
    source in document order (sources in the order their best sentence ranks): by TF-IDF
    likeness to the heading and the question, brochure copy scoring lower, near repeats
    left out, at most ``most_per_source`` of each source (fewer when there are many), a
    sentence that refers back only with the one before it."""
    scored = _ranked(question, heading, evidence)
    if not scored:
        return []
    # a section drawing on many sources quotes fewer sentences of each, so it can
    # cite more of them (at least two each)
    per_source = max(2, min(most_per_source, limit // max(1, len(evidence))))
    picked: dict[int, list[tuple[int, str]]] = {}
    order: list[int] = []
    chosen_texts: list[str] = []
    lookup = {ev.marker: ev for ev in evidence}
    for neg, _rank, pos, marker, s in scored:
        if len(chosen_texts) >= limit or neg > -0.02:
            break
        if len(picked.get(marker, [])) >= per_source:
            continue
        if any(fuzz.token_set_ratio(s, t) > 85 for t in chosen_texts):
            continue
        group = [(pos, s)]
        if refers_back(s) and not self_reference(s):  # "It is …": with the one before it
            content = lookup[marker].content
            before = quotable_sentences(content)[pos - 1] if pos else None
            # the sentence before it in the page names what it refers to only if it is in
            # the same paragraph ("The technology has not …" after another section's line)
            if (
                before is None
                or refers_back(before)
                or points_in_page(before)
                or before.endswith("?")
                or not same_paragraph(content, before, s)
            ):
                continue
            if (pos - 1, before) not in picked.get(marker, []):
                group.insert(0, (pos - 1, before))
        else:
            intro = _introduction(s, pos, lookup[marker], chosen_texts)
            if intro is not None and intro not in picked.get(marker, []):
                group.insert(0, intro)
        picked.setdefault(marker, []).extend(group)
        if marker not in order:
            order.append(marker)
        chosen_texts.extend(t for _p, t in group)
    for marker in picked:
        picked[marker] = list(dict.fromkeys(picked[marker]))
    # a series' pages (quarterly recaps) in time order, in the places they were ranked to
    order = in_period_order(order, lambda m: lookup[m].title)
    return [(lookup[m], [s for _, s in sorted(picked[m])]) for m in order]


def _ranked(
    question: str, heading: str, evidence: Sequence[Evidence]
) -> list[tuple[float, int, int, int, str]]:
    """Every quotable sentence of ``evidence`` as (minus its score, its page's rank, its
    position, its page's marker, the sentence), best first."""
    candidates: list[tuple[Evidence, int, str]] = []
    for ev in evidence:
        for pos, s in enumerate(quotable_sentences(ev.content)):
            # a page's question is not something it states; its licence is not news; a
            # pointer at its code or tables points at nothing in a report
            if not s.endswith("?") and not _BOILERPLATE.match(s) and not points_in_page(s):
                candidates.append((ev, pos, s))
    if not candidates:
        return []
    idf = idf_table(terms(s) for _, _, s in candidates)
    target = tfidf(terms(heading) * 2 + terms(question), idf)
    title_vecs = {ev.marker: tfidf(terms(ev.title), idf) for ev in evidence}
    return sorted(
        (
            (
                -(
                    cosine(tfidf(terms(s), idf), target)
                    + 0.3 * cosine(title_vecs[ev.marker], target)
                )
                * (MARKETING_PENALTY if _selling(s) else 1.0)
                * (PERSONAL_PENALTY if _PERSONAL.search(s) else 1.0),
                ev.rank,
                pos,
                ev.marker,
                s,
            )
            for ev, pos, s in candidates
        ),
    )


_OPENING_NAME = re.compile(r"[A-Z][\w'’-]*")


def _short_name(sentence: str, title: str) -> str | None:
    """The fuller name a sentence's opening word shortens, read from its page's title:
    "Saltmarsh was founded …" on a page titled "Saltmarsh Cells SaltCore module" →
    "Saltmarsh Cells" (None when the sentence opens with no such short form)."""
    m = _OPENING_NAME.match(sentence)
    if m is None:
        return None
    words = title.split()
    for i, word in enumerate(words[:-1]):
        if word == m.group(0) and words[i + 1][:1].isupper():
            full = f"{word} {words[i + 1]}"
            return None if sentence.startswith(full) else full
    return None


def _introduction(
    sentence: str, pos: int, ev: Evidence, chosen: Sequence[str]
) -> tuple[int, str] | None:
    """The page's sentence that introduces the name ``sentence`` opens with in short
    form ("Saltmarsh Cells launched …" before "Saltmarsh was founded …"), when nothing
    quoted so far names it in full; None when there is none before it."""
    full = _short_name(sentence, clean_inline(ev.title))
    if full is None or any(full in text for text in chosen):
        return None
    earlier = quotable_sentences(ev.content)[:pos]
    return next(((i, text) for i, text in enumerate(earlier) if full in text), None)


#: words of brochure copy: a sentence selling rather than stating scores lower
_MARKETING = re.compile(
    r"\b(?:world[- ]class|leading|best[- ]in[- ]class|cutting[- ]edge|state[- ]of[- ]the[- ]art|"
    r"innovative|revolutionary|seamless(?:ly)?|unparalleled|unmatched|trusted|premier|"
    r"game[- ]chang\w*|next[- ]generation|industry[- ]leading|exceptional|proud(?:ly)?|"
    r"passionate|empower\w*|delight\w*|award[- ]winning)\b|!",
    re.I,
)
MARKETING_PENALTY = 0.2  # a brochure sentence scores this share: quoted only when nothing else fits
#: a page's licence or copyright notice ("This document has been placed in the public
#: domain.", "This work is licensed under …")
_BOILERPLATE = re.compile(
    r"(?:(?:This|The present) \w+(?: \w+)? (?:is|has been|was|are) (?:hereby )?"
    r"(?:placed in the public domain|(?:dual[- ])?licen[cs]ed under|released under|"
    r"made available under)|Copyright\b|All rights reserved)",
    re.I,
)
#: an author speaking for themselves ("the tooling I used", "in my view"): their voice,
#: quoted in a report, reads as the report's
_PERSONAL = re.compile(r"\b(?:I|I'm|I've|I'd|my)\b")
PERSONAL_PENALTY = 0.5


def _selling(sentence: str) -> bool:
    """Brochure copy: at least two selling words, or an exclamation mark."""
    return len(_MARKETING.findall(sentence)) >= 2 or "!" in sentence
