"""A writer's draft checked against its sources before it is proposed.

The claims machinery checks the sentences a report already holds; this checks the ones a
writer just wrote or rewrote. Each new sentence is anchored in the pages it cites, as
they stand now:

- a sentence stating a field the page declares otherwise ("Status: Final" where the page
  says "Status: Accepted") is corrected to the declared value, when the sentence cites
  that one page and the corrected sentence is supported by it — a model that copies one
  source's status change onto another's sentence must not reach the report;
- a sentence no passage of its cited page supports is reported, so the proposal can say
  which sentences a reviewer has to check.

Sentences the old body already held are not re-checked here: their claims were checked
(and, where needed, handed to the writer) before the draft was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from core.domain.anchors import anchor_claim
from core.domain.citations import strip_citations
from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.engine.claims import quote_map
from core.states import ClaimOutcome
from core.writers.base import ClaimUpdate
from core.writers.revision import revise_sentence

CORRECTION_MIN = 80  # similarity (rapidfuzz ratio) of a corrected sentence to the writer's


@dataclass
class DraftCheck:
    """The draft with contradicted fields corrected, and what a reviewer should know."""

    body: str
    # "'Status: Final' → 'Status: Accepted' [17]"
    corrected: list[str] = field(default_factory=list)
    unsupported: list[tuple[str, int]] = field(default_factory=list)  # (sentence, marker)


def _replace_sentence(body: str, sentence: str, replacement: str) -> str:
    """``body`` with ``sentence`` (wherever its lines wrap) replaced once."""
    pattern = r"\s+".join(re.escape(w) for w in sentence.split())
    m = re.search(pattern, body)
    if m is None:
        return body
    return body[: m.start()] + replacement + body[m.end() :]


def _a_correction(sentence: str, revised: list[str]) -> bool:
    """Is ``revised`` the same sentence with its values set right (not the page's passage
    quoted in its place, which is the writer's job)?"""
    return (
        len(revised) == 1
        and "](" not in revised[0]
        and fuzz.ratio(sentence, revised[0]) >= CORRECTION_MIN
    )


def _supported(sentence: str, content: str) -> bool:
    found = anchor_claim(strip_citations(sentence), content)
    return found.supported and not found.contradicted


def check_draft(
    body: str,
    old_body: str,
    sources: Mapping[int, str],
    quotes: Iterable[Mapping[str, object]] = (),
) -> DraftCheck:
    """Check the sentences of ``body`` that ``old_body`` did not hold against ``sources``
    (marker → the page's current text). Markers with no known page are left alone."""
    old = {sentence_key(s) for _pos, s, _ms in cited_sentences(old_body)}
    hints = quote_map(quotes)
    out = DraftCheck(body)
    for _pos, sentence, markers in cited_sentences(body):
        if sentence_key(sentence) in old:
            continue
        known = [m for m in markers if sources.get(m)]
        for marker in known:
            content = sources[marker]
            found = anchor_claim(
                strip_citations(sentence), content, hints.get((sentence_key(sentence), marker))
            )
            if found.supported:
                continue
            if found.contradicted and len(known) == 1:
                update = ClaimUpdate(
                    sentence,
                    marker,
                    ClaimOutcome.EDITED,
                    tuple((stated, p.text) for stated, p in found.contradicted),
                )
                revised = revise_sentence(sentence, [update])
                if _a_correction(sentence, revised) and _supported(revised[0], content):
                    out.body = _replace_sentence(out.body, sentence, " ".join(revised))
                    out.corrected.extend(
                        f"'{stated}' → '{p.text.strip().lstrip('-*+• ')}' [{marker}]"
                        for stated, p in found.contradicted
                    )
                    continue
            out.unsupported.append((sentence, marker))
    return out
