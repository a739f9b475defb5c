"""How the LLM writer checks and cleans a reply's text before using it.

A section body is made safe (no leading copy of its heading, no links or raw HTML, no
heading lines), its citations are kept to the sources the model was given, and a
revision's body is checked for sentences it still states unrevised. An outline's
headings are cleaned the same way. A body that cannot be used raises InvalidReply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.domain.citations import (
    Citation,
    cited_markers,
    closed_code_spans,
    format_citation,
    rewrite_citations,
)
from core.domain.passages import sentence_key
from core.domain.report_render import escape_heading_lines
from core.domain.sentences import cited_sentences
from core.domain.untrusted import clean_markdown
from core.domain.validation import strip_controls
from core.states import ClaimOutcome
from core.writers.base import ClaimUpdate, Draft, Evidence
from core.writers.replies import InvalidReply

_LEADING_HEADING = re.compile(r"\A\s*#{1,6}[ \t]+([^\n]*)\n+")


def filter_citations(body: str, allowed: set[int]) -> tuple[str, list[int]]:
    """The body with every citation id outside ``allowed`` removed, and the dropped ids
    (one entry per dropped id of each citation; the citation grammar is
    :mod:`core.domain.citations`)."""
    dropped: list[int] = []

    def fix(citation: Citation) -> str | None:
        keep = [i for i in citation.markers if i in allowed]
        dropped.extend(i for i in citation.markers if i not in allowed)
        if len(keep) == len(citation.markers):
            return None
        return format_citation(keep) if keep else ""

    return rewrite_citations(body, fix), dropped


def clean_body(body: str, heading: str) -> str:
    """Model prose made safe for a section body: no leading copy of the heading, no
    links, images, autolinks, link definitions or raw HTML (``core.domain.untrusted``: only the
    [n] citations name sources), no bidi overrides, no heading lines."""
    text = clean_markdown(body).strip()
    m = _LEADING_HEADING.match(text)
    if m and m.group(1).strip(" #*").casefold() == heading.strip().casefold():
        text = text[m.end() :]
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return escape_heading_lines(closed_code_spans(text))


def checked_draft(
    body: str,
    heading: str,
    allowed: set[int],
    gone: set[int],
    notes: list[str],
    *,
    require_cite: bool,
) -> Draft:
    """The reply's body as a section's draft: cleaned, its citations kept to ``allowed``
    (``notes`` set to what was dropped: unknown ids, and those of ``gone`` sources).
    Raises InvalidReply when nothing is left, or no sentence cites when one must."""
    text = clean_body(body, heading)
    text, dropped = filter_citations(text, allowed)
    # "word ." → "word." (a model's stray space), but never ".py" or ":pep:"
    text = re.sub(r"[ \t]+([.,;:!?])(?=\s|$)", r"\1", text).strip()
    unknown = [i for i in dropped if i not in gone]
    of_gone = len(dropped) - len(unknown)
    if not text:
        raise InvalidReply("the section text is empty")
    markers = cited_markers(text)
    if require_cite and not markers:
        raise InvalidReply(
            "no sentence cites an allowed source id; cite every factual sentence with "
            f"[n], n one of {', '.join(map(str, sorted(allowed)))}"
        )
    notes[:] = []
    if unknown:
        notes.append(
            f"dropped {len(unknown)} unknown citation{'s' * (len(unknown) != 1)} "
            f"({', '.join(f'[{i}]' for i in sorted(set(unknown)))})"
        )
    if of_gone:
        notes.append(f"dropped {of_gone} citation{'s' * (of_gone != 1)} of gone sources")
    return Draft(body=text, markers=markers, notes=list(notes))


def clean_heading(text: str) -> str:
    heading = strip_controls(text.replace("#", " ").replace("*", "")).strip(" .:-")
    heading = re.sub(r"^\d+(?:\.\d+)*[.)]?\s+", "", heading)
    return heading[:80]


def still_stated(body: str, claims: Sequence[ClaimUpdate]) -> list[ClaimUpdate]:
    """The claims ``body`` still states unrevised: the same sentence, still citing the
    same source (markers, markup and spacing aside)."""
    cited = {
        (sentence_key(sentence), marker)
        for _pos, sentence, markers in cited_sentences(body)
        for marker in markers
    }
    return [u for u in claims if (sentence_key(u.sentence), u.marker) in cited]


def _all_gone(u: ClaimUpdate) -> bool:
    """Does the source no longer say anything the claim rested on?"""
    return u.outcome == ClaimOutcome.GONE and all(new is None for _old, new in u.passages)


def may_empty(
    old_body: str,
    claims: Sequence[ClaimUpdate],
    new_evidence: Sequence[Evidence],
    current: Sequence[Evidence],
    gone: set[int],
) -> bool:
    """May a revision leave the section empty? Only when nothing it cites is left: every
    source it cites is gone and no source is current, or (with changed claims and no new
    source) every citation of every sentence is of a gone source or of a claim whose
    passages are all gone."""
    # markers each old sentence loses because every passage it rested on is gone
    lost: dict[str, set[int]] = {}
    for u in claims:
        if _all_gone(u):
            lost.setdefault(sentence_key(u.sentence), set()).add(u.marker)
    return (not current and set(cited_markers(old_body)) <= gone) or (
        bool(claims)
        and not new_evidence
        and all(
            set(markers) <= gone | lost.get(sentence_key(sentence), set())
            for _pos, sentence, markers in cited_sentences(old_body)
        )
    )
