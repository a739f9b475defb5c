"""Numbers about one committed version, checked against the text, not the engine's word:
the version as measured (:class:`VersionView`), the corpus as ground truth (:class:`Pages`),
and its claims.

- ``support``: the share of cited sentences with a claim anchored in the snapshot it
  cites: state ``supported`` *and* every selector's ``exact`` text found in that
  snapshot's content.
- ``stale_claims``: claims that still cite a snapshot whose passage the page, as the
  corpus holds it at the version's date, no longer contains (or marked stale).
- ``uncited_sentences``: sentences of the report's own sections (not the derived overview
  and key facts) that no citation covers — said with no source given for them.

The other measures: ``fact_accuracy`` (``core.bench.fact_accuracy``), ``freshness``
(``core.bench.freshness``), relevance and size (``core.bench.relevance``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.domain.keyfacts import fact_map, read_key_facts
from core.domain.metrics import continuity
from core.domain.passages import sentence_key
from core.domain.report_state import ReportDoc
from core.domain.sentences import cited_sentences, uncovered_sentences
from core.engine.overview import DERIVED_KEYS
from core.engine.review import _text
from core.sources.base import PageNotFound
from core.sources.corpus import Corpus
from core.states import ClaimState
from core.store.models import Citation, Claim, ReportVersion, Section, Snapshot, Source
from core.store.repository import citations_of, get_report, get_version, load_doc, outline_of


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
    cited = supported = uncited = 0
    for section in session.exec(
        select(Section).where(Section.version_id == v.version.id).order_by(col(Section.order))
    ):
        if section.level >= 1 and section.key not in DERIVED_KEYS:
            uncited += len(uncovered_sentences(section.body))
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
        "uncited_sentences": uncited,
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
