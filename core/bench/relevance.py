"""Relevance and size of a version (ground truth from the queries file, pages from the
corpus):

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

from collections.abc import Set
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.bench.measure import Pages, VersionView
from core.bench.truth import QuerySpec
from core.domain.citations import strip_citations
from core.domain.report_state import ReportDoc
from core.store.models import Snapshot, Source


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
