"""The ``fact_accuracy`` measure: of the key-fact (status) changes that hit a source the
previous version cited, the share the version states — a sentence citing the source gives
the new value, and none gives the old one as current.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache

from core.bench.measure import Pages, VersionView
from core.bench.truth import StatusChange
from core.domain.citations import strip_citations
from core.domain.fact_values import clean_value
from core.domain.passages import normalise
from core.domain.report_state import SectionDoc
from core.domain.sentences import cited_sentences


def _plain(text: str) -> str:
    """``text`` without [n] markers and Markdown/rst/HTML markup, casefolded."""
    return normalise(clean_value(strip_citations(text)))


def _value_forms(value: str) -> tuple[str, str]:
    """(the value, its status word): ``Implemented (Swift 5.5)`` → ``implemented``."""
    full = _plain(value)
    return full, re.sub(r"\s*\(.*\)\s*$", "", full).strip() or full


@lru_cache(maxsize=4096)
def _word_re(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)")


#: a value reads as a status when a "status" field or clause precedes it (up to a ";"),
#: when it follows a copula or a bracket ("is now final", "(Accepted)", "from Draft to
#: Final"), or when an arrow joins it to another ("Accepted → Final"). Not: a verb or an
#: adjective in prose ("if the function only accepted three strings", "a final qualifier"),
#: nor a relative clause about something else ("code that is accepted"), nor a condition
#: ("once this PEP is accepted"), nor a modal ("should be accepted for annotations").
_STATUS_CLAUSE = re.compile(r"\bstatus\b")
_LEAD = re.compile(
    r"(?:(?<!\w)(?P<word>is|was|are|were|be|been|being|remains?|remained|stays?|stayed|"
    r"becomes?|became|now|marked|declared|from|to)|[(\[:→>])\s*"
    r"(?:(?:now|still|currently|officially|formally|already|finally|also|a|an|the|as)\s+)*$"
)
_TRAIL_ARROW = re.compile(r"^\s*(?:→|->|=>)")
_VERB_OBJECT = re.compile(r"^\s+(?:a|an|the|new|and|it|them|this|that|one)\b")
#: a relative pronoun before the copula: the clause describes the noun before it, not
#: the page ("… into code that is accepted, because the existential is opened")
_RELATIVE = re.compile(r"(?<!\w)(?:that|which|who)\s+$")
#: a modal before "be": what ought to or may happen, not what holds ("The new union
#: syntax should be accepted for function annotations", "is expected to be final")
_MODAL = re.compile(r"(?<!\w)(?:should|must|could|would|may|might|can|will|shall|to)\s+$")
#: a condition before the copula, in the same clause: what would hold then, not what
#: holds ("If both this PEP and PEP 591 are accepted, type checkers …", "once it is final")
_CONDITION = re.compile(r"(?<!\w)(?:if|once|unless|until|whether|provided|assuming)\b[^,;:.]*$")


def _mentions(text: str, value: str) -> bool:
    """Whether normalised ``text`` states ``value`` as a status (see :data:`_LEAD`)."""
    for m in _word_re(value).finditer(text):
        head = text[max(0, m.start() - 80) : m.start()]
        if _STATUS_CLAUSE.search(head[head.rfind(";") + 1 :]):
            return True
        if _TRAIL_ARROW.match(text[m.end() :]):
            return True
        lead = _LEAD.search(head)
        if lead is None:
            continue
        if lead["word"] == "to" and _VERB_OBJECT.match(text[m.end() :]):
            continue  # "to draft a proposal": a verb
        if lead["word"] and _RELATIVE.search(head[: lead.start()]):
            continue  # "code that is accepted": a clause about another thing
        if lead["word"] and _CONDITION.search(head[: lead.start()]):
            continue  # "once this PEP is accepted": a condition, not a status
        if lead["word"] == "be" and _MODAL.search(head[: lead.start()]):
            continue  # "should be accepted for annotations": not what holds
        return True
    return False


def _says(text: str, values: Iterable[str]) -> bool:
    return any(v and _mentions(text, v) for v in values)


def fact_stated(
    sentences: Iterable[str], new_values: Iterable[str], old_values: Iterable[str]
) -> bool:
    """True when a sentence states a new value, and no sentence states an old value as
    current (an old value may appear only beside a new one: "Accepted → Final").

    Compared normalised (casefolded, markup stripped), as a status (:func:`_mentions`:
    "Status: Final", "is now final", "(Final)", "Accepted → Final"); a new value with a
    parenthesised qualifier also counts as its status word alone ("implemented" for
    "Implemented (Swift 5.5)"), unless an old value has that word too.
    """
    new_forms = [_value_forms(v) for v in new_values if v.strip()]
    old_forms = [_value_forms(v) for v in old_values if v.strip()]
    new_full = {f for f, _ in new_forms}
    old_full = {f for f, _ in old_forms} - new_full
    new_bases = {b for _, b in new_forms} - {b for _, b in old_forms}
    old_bases = {b for _, b in old_forms} - {b for _, b in new_forms}
    new_ok = new_full | new_bases
    old_said = old_full | old_bases
    states_new = False
    for sentence in sentences:
        text = _plain(sentence)
        says_new = _says(text, new_ok)
        if _says(text, old_said) and not says_new:
            return False
        states_new = states_new or says_new
    return states_new


def citing_sentences(
    sections: Iterable[SectionDoc], marker_urls: dict[int, str]
) -> dict[str, list[str]]:
    """url → the sentences of the sections that cite it."""
    out: dict[str, list[str]] = defaultdict(list)
    for section in sections:
        for _pos, sentence, markers in cited_sentences(section.body):
            for url in dict.fromkeys(marker_urls[m] for m in markers if m in marker_urls):
                out[url].append(sentence)
    return out


def fact_accuracy(
    v: VersionView,
    prev_urls: set[str],
    changes: dict[str, StatusChange],
    pages: Pages | None,
    prev_as_of: datetime,
) -> tuple[float | None, int]:
    """(share of the status changes of sources ``prev_urls`` cites that ``v`` states, how
    many changes there were); None when no change hit a cited source."""
    hits = {u: c for u, c in changes.items() if u in prev_urls}
    if not hits:
        return None, 0
    said = citing_sentences(v.doc.sections, v.marker_urls)
    right = 0
    for url, change in hits.items():
        new, old = [change.after], [change.before]
        if pages is not None:  # the values as the page itself declares them
            new.append(pages.status(url, v.version.as_of) or "")
            old.append(pages.status(url, prev_as_of) or "")
        if fact_stated(said.get(url, []), new, old):
            right += 1
    return round(right / len(hits), 4), len(hits)
