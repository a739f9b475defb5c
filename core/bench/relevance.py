"""Relevance and size of a version (ground truth from the queries file, pages from the
corpus):

- ``topical_precision``: |cited ∩ relevant| / |cited| — the share of the sources R(t)
  cites that the question's relevant set holds (None when it cites nothing).
- ``key_source_recall``: of the key sources (relevant pages scored at least
  ``key_share`` × the question's top score, :meth:`QuerySpec.key_sources`) that exist in
  the corpus at t, the share R(t) cites (None when there are none).
- ``key_source_recall_budget``: the same measured against what the report's source
  budget can hold: cited key sources / min(key sources, budget). A report of 25 sources
  cannot hold 39 key sources; with no budget, the same as ``key_source_recall``.
- ``central_removed``: the sources R(t-1) cited that R(t) no longer cites although they
  are among the CENTRAL_HITS first hits of the corpus search, as of t, for the question
  or one of its facets (``central_removed_relevant``: those of them the question's
  relevant set holds). A report must never drop what the search puts first.
- ``discovery_recall``: of the relevant pages new in the window (t_prev, t], the share
  the run fetched as candidates — every page it stored a ``new`` snapshot of (discovery
  stores each fetched search hit so; a from-scratch create stores every page it
  fetched, so a regenerated report's candidates are its whole fetched pool). However
  many of them the report then cites. None without a window (a first report) or when
  no relevant page is new in it.
- ``words``: the words of R(t)'s section bodies, citation markers left out.
"""

from __future__ import annotations

from collections.abc import Set
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.bench.measure import Pages, VersionView
from core.bench.truth import QuerySpec
from core.domain.citations import strip_citations
from core.domain.facets import facets_of
from core.domain.report_settings import ReportSettings
from core.domain.report_state import ReportDoc
from core.domain.source_plan import budget_of
from core.store.models import Snapshot, Source
from core.store.repository import get_report

DEFAULT_SOURCES = ReportSettings().max_sources  # a report whose settings name no budget


def recall(new_pages: set[str], cited: set[str]) -> float | None:
    return round(len(new_pages & cited) / len(new_pages), 4) if new_pages else None


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


def key_source_recall_budget(
    key: Set[str], cited: Set[str], as_of: datetime, pages: Pages, budget: int
) -> float | None:
    """Cited key sources / min(key sources that exist at ``as_of``, ``budget``); None
    when none exists. ``budget`` 0 or less: no limit."""
    present = {u for u in key if pages.exists(u, as_of)}
    if not present:
        return None
    room = min(len(present), budget) if budget > 0 else len(present)
    return round(min(1.0, len(present & set(cited)) / room), 4)


CENTRAL_HITS = 5  # the first hits of a search that a report must not drop


def central_pages(pages: Pages, question: str, as_of: datetime) -> set[str]:
    """The CENTRAL_HITS first corpus-search hits, as of ``as_of``, for ``question`` and
    for each of its facets (``core.domain.facets``)."""
    queries = [question, *(f.query for f in facets_of(question))]
    return {
        hit.url
        for q in queries
        for hit in pages.corpus.search(q, max_results=CENTRAL_HITS, end_date=as_of)
    }


def central_removed(
    pages: Pages, spec: QuerySpec, before: Set[str], after: Set[str], as_of: datetime
) -> dict[str, int]:
    """How many sources cited ``before`` and not ``after`` are central at ``as_of``
    (``central_pages``), and how many of those are relevant."""
    gone = set(before) - set(after)
    if not gone:
        return {"central_removed": 0, "central_removed_relevant": 0}
    hit = gone & central_pages(pages, spec.query, as_of)
    return {"central_removed": len(hit), "central_removed_relevant": len(hit & spec.relevant)}


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
    key = spec.key_sources(key_share)
    ksr, n_key = key_source_recall(key, cited, v.version.as_of, pages)
    settings = get_report(session, v.report_id).settings or {}
    budget = budget_of({"max_sources": DEFAULT_SOURCES, **settings}).sources
    new = spec.new_between(*window) if window else set()
    found = new & candidates(session, run_id) if new else set()
    return {
        "topical_precision": topical_precision(cited, spec.relevant),
        "key_source_recall": ksr,
        "key_sources": n_key,
        "key_source_recall_budget": key_source_recall_budget(
            key, cited, v.version.as_of, pages, budget
        ),
        "discovery_recall": recall(new, found),
        "discovery_new": len(new),
        "discovery_found": len(found),
        "cited": len(cited),
        "words": words(v.doc),
    }
