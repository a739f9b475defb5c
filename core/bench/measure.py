"""Numbers about one committed version, checked against the text, not the engine's word.

- ``support``: the share of cited sentences with a claim anchored in the snapshot it
  cites: state ``supported`` *and* every selector's ``exact`` text found in that
  snapshot's content.
- ``stale_claims``: claims that still cite a snapshot whose passage the page, as the
  corpus holds it at the version's date, no longer contains (or marked stale).
- ``fact_accuracy``: of the key-fact (status) changes that hit a source the previous
  version cited, the share the version states: a sentence citing the source gives the
  new value, and none gives the old one as current.
- ``freshness``: of the sources R(t-1) cited that changed materially by t, the share
  whose old citing sentences R(t) either changed or re-anchored intact (from the run's
  proposals); for a rebuild, the share it cites again.

Relevance and size (ground truth from the queries file, pages from the corpus):

- ``topical_precision``: |cited ∩ relevant| / |cited| — the share of the sources R(t)
  cites that the question's relevant set holds (None when it cites nothing).
- ``key_source_recall``: of the key sources (relevant pages scored at least
  ``key_share`` × the question's top score, :meth:`QuerySpec.key_sources`) that exist in
  the corpus at t, the share R(t) cites (None when there are none).
- ``discovery_recall``: of the relevant pages new in the window (t_prev, t], the share
  the run fetched as candidates — every page it stored a ``new`` snapshot of (discovery
  stores each fetched search hit so; a from-scratch create stores every page it
  fetched, so a regenerated report's candidates are its whole fetched pool). However
  many of them the report then cites. None without a window (a first report) or when
  no relevant page is new in it.
- ``words``: the words of R(t)'s section bodies, citation markers left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Set
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlmodel import Session, col, select

from core.bench.truth import QuerySpec, StatusChange
from core.citations import strip_citations
from core.claims import cited_sentences
from core.fact_values import clean_value
from core.keyfacts import fact_map, read_key_facts
from core.metrics import continuity
from core.models import Citation, Claim, ReportVersion, Section, Snapshot, Source
from core.passages import normalise, sentence_key
from core.report_state import ReportDoc, SectionDoc
from core.repository import citations_of, get_report, get_version, load_doc, outline_of
from core.review import _text, proposals_of
from core.sources.base import PageNotFound
from core.states import HOLDING_OUTCOMES, ClaimOutcome, ClaimState

#: outcomes of a re-checked claim after which its unchanged sentence is still anchored
FRESH_OUTCOMES = HOLDING_OUTCOMES | {ClaimOutcome.ANCHORED}


@dataclass
class VersionView:
    report_id: int
    number: int
    version: ReportVersion
    doc: ReportDoc

    @property
    def urls(self) -> set[str]:
        return {r.url for r in self.doc.references}

    @property
    def marker_urls(self) -> dict[int, str]:
        return {r.marker: r.url for r in self.doc.references}


def view(session: Session, report_id: int, number: int | None = None) -> VersionView:
    version = get_version(session, get_report(session, report_id), number)
    return VersionView(report_id, version.number, version, load_doc(session, version))


def continuity_between(old: VersionView, new: VersionView) -> dict[str, float]:
    return continuity(
        _text(old.doc.sections),
        _text(new.doc.sections),
        outline_of(old.doc.sections),
        outline_of(new.doc.sections),
    ).as_dict()


# --------------------------------------------------------------------------- the corpus


class Pages:
    """What the corpus says a page was at an instant (the benchmark's ground truth)."""

    def __init__(self, corpus_name: str) -> None:
        from core.sources.corpus import Corpus

        self.corpus = Corpus.open(corpus_name)
        self._cache: dict[tuple[str, datetime], tuple[str, dict[str, Any]] | None] = {}

    def page(self, url: str, as_of: datetime) -> tuple[str, dict[str, Any]] | None:
        """(content, metadata) of ``url`` at ``as_of``; None if it does not exist then."""
        key = (url, as_of)
        if key not in self._cache:
            try:
                p = self.corpus.fetch(url, as_of)
                self._cache[key] = (p.content, dict(p.meta or {}))
            except PageNotFound:
                self._cache[key] = None
        return self._cache[key]

    def exists(self, url: str, as_of: datetime) -> bool:
        return self.page(url, as_of) is not None

    def status(self, url: str, as_of: datetime) -> str | None:
        """The status the page declares about itself at ``as_of`` (its key facts)."""
        page = self.page(url, as_of)
        if page is None:
            return None
        fact = fact_map(read_key_facts(*page)).get("status")
        return fact.value if fact is not None and fact.value else None

    def close(self) -> None:
        self.corpus.close()


# --------------------------------------------------------------------------- claims


@dataclass
class ClaimRow:
    section_id: int
    position: int
    sentence: str
    marker: int
    state: str
    selectors: list[dict[str, Any]]
    snapshot_id: int | None
    content: str | None
    url: str | None


def claim_rows(session: Session, version_id: int) -> list[ClaimRow]:
    rows = session.exec(
        select(Claim, Snapshot.content, Source.url)
        .join(Section, col(Section.id) == Claim.section_id)
        .join(Snapshot, col(Snapshot.id) == Claim.snapshot_id, isouter=True)
        .join(Source, col(Source.id) == Snapshot.source_id, isouter=True)
        .where(Section.version_id == version_id)
        .order_by(col(Section.order), col(Claim.position), col(Claim.marker))
    ).all()
    return [
        ClaimRow(
            c.section_id,
            c.position,
            c.sentence,
            c.marker,
            c.state,
            list(c.selectors or []),
            c.snapshot_id,
            content,
            url,
        )
        for c, content, url in rows
    ]


def anchored(claim: ClaimRow) -> bool:
    """Supported, and every passage it rests on is in the snapshot it cites, verbatim."""
    return (
        claim.state == ClaimState.SUPPORTED
        and bool(claim.content)
        and bool(claim.selectors)
        and all(_exact_in(s, claim.content or "") for s in claim.selectors)
    )


def _exact_in(selector: dict[str, Any], content: str) -> bool:
    exact = str(selector.get("exact") or "")
    return bool(exact) and exact in content


def quality(session: Session, v: VersionView, pages: Pages | None = None) -> dict[str, Any]:
    """citation_validity, support, stale_claims (and the claims' states) of a version."""
    snaps = citations_of(session, v.version.id)
    markers = [m for s in v.doc.sections for m in s.markers]
    valid = sum(1 for m in markers if m in snaps and snaps[m].content)
    claims = claim_rows(session, v.version.id)
    by_sentence: dict[tuple[int, int], list[ClaimRow]] = defaultdict(list)
    for c in claims:
        by_sentence[(c.section_id, c.position)].append(c)
    cited_markers: dict[int, set[int]] = defaultdict(set)
    for section_id, marker in session.exec(
        select(Citation.section_id, Citation.marker)
        .join(Section, col(Section.id) == Citation.section_id)
        .where(Section.version_id == v.version.id)
    ):
        cited_markers[section_id].add(marker)
    for c in claims:
        cited_markers[c.section_id].add(c.marker)
    cited = supported = 0
    for section in session.exec(
        select(Section).where(Section.version_id == v.version.id).order_by(col(Section.order))
    ):
        refs = cited_markers[section.id]
        for position, sentence, ms in cited_sentences(section.body):
            if not refs.intersection(ms):
                continue  # a bare [n] with no reference stays text
            cited += 1
            key = sentence_key(sentence)
            if any(
                anchored(c) and sentence_key(c.sentence) == key
                for c in by_sentence.get((section.id, position), [])
            ):
                supported += 1
    states: dict[str, int] = dict.fromkeys(ClaimState, 0)
    for c in claims:
        states[c.state] = states.get(c.state, 0) + 1
    stale = stale_claims(claims, v.version.as_of, pages)
    return {
        "citation_validity": round(valid / len(markers), 4) if markers else 1.0,
        "support": round(supported / cited, 4) if cited else 1.0,
        "cited_sentences": cited,
        "stale_claims": stale,
        "stale_citations": stale,  # the name older result files use
        "claims": states,
    }


def stale_claims(claims: Iterable[ClaimRow], as_of: datetime, pages: Pages | None) -> int:
    """Claims marked stale, plus claims marked supported that still cite a snapshot whose
    passages the page no longer contains at ``as_of`` (checked in the corpus when
    ``pages`` is given): the engine's word is not taken for it."""
    n = 0
    for c in claims:
        if c.state == ClaimState.STALE:
            n += 1
            continue
        if c.state != ClaimState.SUPPORTED or pages is None or c.url is None or c.content is None:
            continue
        if not c.selectors:
            continue  # nothing anchored: counted against support, not here
        now = pages.page(c.url, as_of)
        current = now[0] if now is not None else None
        if current == c.content:
            continue
        if current is None or not all(_exact_in(s, current) for s in c.selectors):
            n += 1
    return n


# --------------------------------------------------------------------------- key facts


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
#: adjective in prose ("if the function only accepted three strings", "a final qualifier").
_STATUS_CLAUSE = re.compile(r"\bstatus\b")
_LEAD = re.compile(
    r"(?:(?<!\w)(?P<word>is|was|are|were|be|been|being|remains?|remained|stays?|stayed|"
    r"becomes?|became|now|marked|declared|from|to)|[(\[:→>])\s*"
    r"(?:(?:now|still|currently|officially|formally|already|finally|also|a|an|the|as)\s+)*$"
)
_TRAIL_ARROW = re.compile(r"^\s*(?:→|->|=>)")
_VERB_OBJECT = re.compile(r"^\s+(?:a|an|the|new|and|it|them|this|that|one)\b")


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


# --------------------------------------------------------------------------- freshness


def freshness_update(
    session: Session, run_id: int, prev: VersionView, material: set[str], new: VersionView
) -> float | None:
    """Of the sources R(t-1) cited that changed materially by t, the share for which
    every sentence of R(t-1) citing them that R(t) still states unchanged was re-anchored
    intact (its check held: intact, moved, reworded, or anchored for the first time, and
    its claim in R(t) is anchored verbatim in the snapshot it cites); sentences the update
    changed or removed count as handled. An extend that leaves such sentences untouched
    while their claims were edited or gone is not fresh."""
    targets = prev.urls & material
    if not targets:
        return None
    keys = dict(
        session.exec(
            select(Section.id, Section.key).where(Section.version_id == new.version.id)
        ).all()
    )
    verified = {
        (keys[c.section_id], sentence_key(c.sentence), c.marker)
        for c in claim_rows(session, new.version.id)
        if anchored(c)
    }
    final = {sec.key: sec.body for sec in new.doc.sections}
    missed = unfresh_sources(
        proposals_of(session, run_id), prev.marker_urls, targets, final, verified
    )
    return round(len(targets - missed) / len(targets), 4)


def unfresh_sources(
    proposals: Iterable[Any],
    marker_urls: dict[int, str],
    targets: set[str],
    final: dict[str, str],
    verified: set[tuple[str, str, int]],
) -> set[str]:
    """The target sources some sentence of R(t-1) still cites, unchanged in R(t), without
    having been re-anchored intact. ``proposals`` are the run's (``key``, ``old_text``,
    ``claims`` checks); ``final`` is R(t)'s section bodies by key; ``verified`` holds the
    (section key, sentence key, marker) of R(t)'s claims anchored verbatim."""
    missed: set[str] = set()
    for p in proposals:
        body = final.get(p.key)
        if not p.old_text or body is None:
            continue  # an added section (all new sentences) or a removed one
        kept = {(sentence_key(s), m) for _pos, s, ms in cited_sentences(body) for m in ms}
        outcome = {
            (sentence_key(str(c["sentence"])), int(c["marker"])): c.get("outcome")
            for c in p.claims or []
        }
        for _pos, sentence, markers in cited_sentences(p.old_text):
            for m in markers:
                url = marker_urls.get(m)
                key = (sentence_key(sentence), m)
                if url not in targets or key not in kept:
                    continue  # another source, or a sentence the update changed
                if outcome.get(key) not in FRESH_OUTCOMES or (p.key, *key) not in verified:
                    missed.add(url)
    return missed


def freshness_rebuild(prev_urls: set[str], material: set[str], new_urls: set[str]) -> float | None:
    """For a from-scratch report: the share of those sources it cites again (read anew)."""
    targets = prev_urls & material
    if not targets:
        return None
    return round(len(targets & new_urls) / len(targets), 4)


def recall(new_pages: set[str], cited: set[str]) -> float | None:
    return round(len(new_pages & cited) / len(new_pages), 4) if new_pages else None


# --------------------------------------------------------------------------- relevance, size


def topical_precision(cited: Set[str], relevant: Set[str]) -> float | None:
    """|cited ∩ relevant| / |cited|; None for a report that cites nothing."""
    return round(len(cited & relevant) / len(cited), 4) if cited else None


def key_source_recall(
    key: Set[str], cited: Set[str], as_of: datetime, pages: Pages
) -> tuple[float | None, int]:
    """(share of the key sources that exist in the corpus at ``as_of`` which ``cited``
    holds, how many exist then); None when none exists."""
    present = {u for u in key if pages.exists(u, as_of)}
    return recall(present, set(cited)), len(present)


def candidates(session: Session, run_id: int) -> set[str]:
    """The URLs of the pages run ``run_id`` fetched as new: its ``new`` snapshots."""
    return set(
        session.exec(
            select(Source.url)
            .join(Snapshot, col(Snapshot.source_id) == Source.id)
            .where(Snapshot.run_id == run_id, Snapshot.change_kind == "new")
            .distinct()
        ).all()
    )


def words(doc: ReportDoc) -> int:
    """Words of the report's section bodies (preamble included), markers left out."""
    return sum(len(strip_citations(s.body).split()) for s in doc.sections)


def relevance(
    session: Session,
    spec: QuerySpec,
    v: VersionView,
    *,
    run_id: int,
    window: tuple[int, int] | None,
    pages: Pages,
    key_share: float,
) -> dict[str, Any]:
    """Topical precision, key-source recall, discovery recall (over the years ``window``
    (t_prev, t], if any) and size of version ``v``, made by run ``run_id``."""
    cited = v.urls
    ksr, n_key = key_source_recall(spec.key_sources(key_share), cited, v.version.as_of, pages)
    new = spec.new_between(*window) if window else set()
    found = new & candidates(session, run_id) if new else set()
    return {
        "topical_precision": topical_precision(cited, spec.relevant),
        "key_source_recall": ksr,
        "key_sources": n_key,
        "discovery_recall": recall(new, found),
        "discovery_new": len(new),
        "discovery_found": len(found),
        "cited": len(cited),
        "words": words(v.doc),
    }
