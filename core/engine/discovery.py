"""Discovery: what is new for a report in the window since its last version — searched
for (the question, then the words its cited pages share, or its facets or busiest
sections), fetched through the shared pool, kept when it is about the question, and
placed in the section it fits."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np
from sqlmodel import Session, col, select

from core.dates import as_utc, utcnow
from core.domain.feedback_query import TEXT_CHARS, feedback_query
from core.domain.placement import facet_sections, place
from core.domain.relevance import FLOOR_QUANTILE, RELEVANCE_MIN, Relevance, fuse
from core.domain.source_plan import superseded_by
from core.engine.checks import SharedChecks
from core.engine.costs import CostMeter
from core.engine.evidence import Found, Progress
from core.engine.fetching import looks
from core.sources.base import Collection, Fetcher, SearchProvider, SearchResult
from core.states import ChangeKind
from core.store.models import PoolEntry, Report, Snapshot, Source
from core.store.pool import get_or_create_source, pool_entry
from core.store.snapshot_store import run_snapshots, store_snapshot
from core.writers.base import Evidence


def discover(
    session: Session,
    report: Report,
    *,
    question: str,
    sections: Sequence[tuple[str, str, str]],  # (key, heading, body)
    hot_sections: set[str],
    window: tuple[datetime, datetime],
    cited_sources: set[int] = frozenset(),  # type: ignore[assignment]
    search: SearchProvider,
    fetcher: Fetcher,
    meter: CostMeter,
    run_id: int | None,
    per_query: int = 5,
    concurrency: int = 8,
    progress: Progress | None = None,
    temporal: bool = True,
    force: bool = False,
    facet_places: Sequence[tuple[str, str, str]] = (),
) -> list[Found]:
    """Search only the window (start, end] for pages new to the pool, and place them.
    A found page the shared pool holds a fresh look at is not fetched again (``refresh``).
    ``facet_places``: parts of the question with no section, where a page may also be
    placed (``core.domain.placement.missing_facets``).

    One search for the whole question (the probe). When it finds new pages and the
    report cites enough pages to say what its topic is, one search with the words that
    set those pages apart from the rest of its pool (``core.domain.feedback_query``: the
    topic in its sources' own words), and one per facet of the question that has no
    section yet. Over every PEP and Swift window these two searches surfaced what the
    per-facet searches did, bar one page in a hundred, at a fraction of the searches
    (``BENCHMARKS.md``). A report citing too few pages searches as before: one search
    per facet the probe's new pages touch (placed in its section, or it has none yet);
    for a question with no facets, one per section the probe found window activity for
    — at least HOT_MIN new pages placed there — and at most a third of the sections,
    busiest first (plus any in ``hot_sections``).

    Each search's hits are ranked again by meaning, and in all but the one with the
    report's words, pages on the question that first appeared in the window come first
    (``new_hits``).
    """
    start, end = window
    if start >= end:
        return []
    pooled = select(Source.url).join(PoolEntry).where(PoolEntry.report_id == report.id)
    known = set(session.exec(pooled).all())
    earlier = _fetched_before(session, run_id, end, cited_sources)

    relevance = Relevance(question, search)

    def run_search(query: str, k: int, fresh_first: bool = True) -> list[SearchResult]:
        meter.add("discover", search.name, searches=1)
        return new_hits(search, query, k, window, known, relevance, fresh_first=fresh_first)

    if progress:
        progress("searching for new evidence")
    cited, others = _pool_pages(session, report, cited_sources)
    words = feedback_query(cited, [*others, *_background(search)])
    hits = _window_hits(run_search, question, sections, hot_sections, per_query, words)
    if not hits and not earlier:
        return []
    checks = SharedChecks(
        session, fetcher, temporal=temporal, report_id=int(report.id), run_id=run_id, force=force
    )
    with meter.stage("fetch"):
        fetched = _fetch_new(session, checks, fetcher, list(hits), end, meter, concurrency, run_id)
    stored = _relevant(relevance, cited, [*earlier, *fetched])
    found = _pooled(session, report, stored, [*sections, *facet_places], relevance, cited)
    if progress:
        progress(f"found {len(found)} new pages")
    return found


def new_hits(
    search: SearchProvider,
    query: str,
    k: int,
    window: tuple[datetime, datetime],
    known: set[str],
    relevance: Relevance | None = None,
    *,
    fresh_first: bool = True,
) -> list[SearchResult]:
    """The ``k`` best hits of ``query`` in ``window`` that are not ``known`` (in the
    report's pool). The window also holds the pages the report has that were edited in
    it — in a busy window most of the first hits — so the search reads WIDE times ``k``.

    With ``relevance``, the hits are ranked again by meaning (title and snippet) fused
    with the search's order, so a page on the question that shares few of its words
    still comes up; and, ``fresh_first``, the pages on the question (RELEVANCE_MIN) that
    first appeared in the window come before those only edited in it: a page the report
    never pooled that was edited in the window was there for earlier searches to find.
    In PEP packaging's 2025 window, "Index support for Trusted Publishing" was the
    question's 55th hit and the 16th page new in the window."""
    start, end = window
    found = search.search(query, max_results=k * WIDE, start_date=start, end_date=end)
    hits = {h.url: h for h in found if h.url not in known}
    order = list(hits)
    if relevance is not None and hits:
        meaning = relevance.page_scores({u: (h.title, h.snippet) for u, h in hits.items()})
        order = fuse(order, meaning)
        if fresh_first:
            order.sort(key=lambda u: not (_new_in(hits[u], start) and meaning[u] >= RELEVANCE_MIN))
    return [hits[u] for u in order[:k]]


def _new_in(hit: SearchResult, start: datetime) -> bool:
    """Did the page first appear after ``start`` (or is that unknown)? A provider may
    give a date without a zone: it is taken as UTC, as the window is."""
    return hit.first_seen is None or as_utc(hit.first_seen) > as_utc(start)


def _fetched_before(
    session: Session, run_id: int | None, end: datetime, cited_sources: set[int]
) -> list[tuple[str, Snapshot]]:
    """The new pages a resumed run already fetched (no second fetch), oldest first."""
    earlier: list[tuple[str, Snapshot]] = []
    for snap in run_snapshots(session, run_id).values():
        if snap.change_kind == "new" and snap.as_of == end and snap.source_id not in cited_sources:
            source = session.get(Source, snap.source_id)
            earlier.append((source.url, snap))
    earlier.sort(key=lambda pair: pair[1].id)
    return earlier


def _window_hits(
    run_search: Callable[..., list[SearchResult]],
    question: str,
    sections: Sequence[tuple[str, str, str]],
    hot_sections: set[str],
    per_query: int,
    words: str = "",
) -> dict[str, SearchResult]:
    """url → hit, in search order: the probe's; then, when the probe found new pages,
    the search with the report's own ``words`` (``feedback_query``) and each facet's that
    has no section yet — or, without such words (a report citing too few pages), each
    facet's that the probe touched, or each hot section's (a question with no facets)."""
    hits: dict[str, SearchResult] = {}
    for h in run_search(question, per_query * PROBE_SHARE):
        hits.setdefault(h.url, h)
    if words and hits:
        # the report's own words also find the older pages it never pooled: no page
        # comes first for being new
        for h in run_search(words, FEEDBACK_HITS, fresh_first=False):
            hits.setdefault(h.url, h)
    facets = facet_sections(question, sections)  # each with its section, if any
    placed = place([(h.url, h.title, h.snippet) for h in hits.values()], sections)
    activity = Counter(key for key, _fit in placed.values() if key)
    if facets:  # each part of the question the window's new pages touch
        queries = [
            facet.query
            for facet, key in facets
            if hits and (key is None or (activity[key] and not words))
        ]
    elif words:
        queries = [f"{heading} {question}" for key, heading, _ in sections if key in hot_sections]
    else:
        busiest = [key for key, n in activity.most_common() if n >= HOT_MIN]
        limit = math.ceil(sum(1 for _, h, _ in sections if h) * HOT_SHARE)
        hot = set(hot_sections) | set(busiest[:limit])
        queries = [
            f"{heading} {question}" for key, heading, _ in sections if key in hot and heading
        ]
    for query in queries:
        for h in run_search(query, per_query):
            hits.setdefault(h.url, h)
    return hits


def _fetch_new(
    session: Session,
    checks: SharedChecks,
    fetcher: Fetcher,
    urls: list[str],
    end: datetime,
    meter: CostMeter,
    concurrency: int,
    run_id: int | None,
) -> list[tuple[str, Snapshot]]:
    """Each new page as of ``end`` (through the shared pool), stored, in ``urls``' order.
    Pages arrive in the order their fetches finish; relevance fuses the search's own
    order with the semantic score, so they are put back in search order."""
    pooled = {s.url: s for s in session.exec(select(Source).where(col(Source.url).in_(urls)))}
    sources = {url: pooled.get(url) for url in urls}
    fetched: list[tuple[str, Snapshot]] = []
    for url, outcome in looks(
        checks, fetcher, sources, end, meter, concurrency=concurrency, stage="fetch"
    ):
        source, page = sources[url], outcome.page
        if page is None:
            if source is not None:
                checks.record(source, end, outcome, None)
            continue
        source = source or get_or_create_source(session, url, page.title)
        # a page another report's run read (or a 304 confirmed) is the stored text
        snap = outcome.snapshot or store_snapshot(session, source, page, as_of=end, run_id=run_id)
        checks.record(source, end, outcome, snap)
        fetched.append((url, snap))
    rank = {url: n for n, url in enumerate(urls)}
    fetched.sort(key=lambda pair: rank[pair[0]])
    return fetched


def _pooled(
    session: Session,
    report: Report,
    stored: list[tuple[str, Snapshot]],
    sections: Sequence[tuple[str, str, str]],
    relevance: Relevance,
    cited: list[tuple[str, str]],
) -> list[Found]:
    """The report's pool entries (reference numbers) for the pages it may use, most
    relevant first, each placed in the section it is most about (``place``: by words and
    meaning, against the pages the report cites)."""
    found: list[Found] = []
    placement = place(
        [(u, snap.title or "", (snap.content or "")[:PAGE_TEXT]) for u, snap in stored],
        sections,
        known=[(t, c[:PAGE_TEXT]) for t, c in cited],
        relevance=relevance,
    )
    for rank, (url, snap) in enumerate(stored):
        source = session.get(Source, snap.source_id)
        entry = pool_entry(session, report, source)
        entry.latest_snapshot_id = snap.id
        entry.last_checked = utcnow()
        entry.status = ChangeKind.NEW
        session.add(entry)
        key, score = placement.get(url, (None, 0.0))
        ev = Evidence(entry.marker, source.url, snap.title, snap.content or "", rank=rank)
        found.append(Found(ev, snap, key, score))
    session.flush()
    return found


def _pool_pages(
    session: Session, report: Report, cited_sources: set[int]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(title, text) of the pages the report's pool holds, as it last read them: (those
    it cites, the others)."""
    cited: list[tuple[str, str]] = []
    others: list[tuple[str, str]] = []
    for entry, snap in session.exec(
        select(PoolEntry, Snapshot)
        .join(Snapshot, col(PoolEntry.latest_snapshot_id) == Snapshot.id)
        .where(PoolEntry.report_id == report.id, col(Snapshot.content).is_not(None))
        .order_by(col(PoolEntry.marker))
    ):
        side = cited if entry.source_id in cited_sources else others
        side.append((snap.title or "", snap.content or ""))
    return cited, others


def _background(search: SearchProvider) -> list[tuple[str, str]]:
    """A fixed sample of the collection ``search`` holds whole (none for the web): what
    its pages in general say, against which the report's own words stand out. Against
    the report's uncited pages alone, the typing report's words were "below easier users
    often making" — its searches had pooled typing pages it did not cite."""
    if not isinstance(search, Collection):
        return []
    key = (search.identity(), str(search.revision))
    if key not in _SAMPLES:
        if len(_SAMPLES) >= 4:  # a process serves a few collections: keep the latest
            _SAMPLES.pop(next(iter(_SAMPLES)))
        # only the head of each page is read: keep no more of it
        pages = search.sample_pages(BACKGROUND_PAGES)
        _SAMPLES[key] = [(title, text[:TEXT_CHARS]) for title, text in pages]
    return _SAMPLES[key]


_SAMPLES: dict[tuple[str, str], list[tuple[str, str]]] = {}


def _relevant(
    relevance: Relevance, cited: list[tuple[str, str]], stored: list[tuple[str, Snapshot]]
) -> list[tuple[str, Snapshot]]:
    """The new pages about the question, most relevant first (search order fused with
    their rank): those ranked, by words and meaning with relevance feedback, at least as
    well as the lower part of the pages the report already cites (FLOOR_QUANTILE), and
    never below RELEVANCE_MIN by meaning — and the design that replaces one the report
    cites (its ``Superseded-By``), whatever its rank: the report must say what replaced
    it. The others stay stored as candidates, out of the report."""
    if not stored:
        return []
    successors = {name.casefold() for _t, c in cited if len(name := superseded_by(c) or "") > 2}
    pages = {url: (snap.title or "", snap.content or "") for url, snap in stored}
    mine = {f"cited {i}": page for i, page in enumerate(cited) if f"cited {i}" not in pages}
    both = {**mine, **pages}
    semantic = relevance.page_scores(both)
    ranks = relevance.hybrid_scores(both, semantic)
    bar = float(np.quantile([ranks[k] for k in mine], FLOOR_QUANTILE)) if mine else -math.inf
    by_url = dict(stored)
    scores = {u: ranks[u] for u in pages}
    return [
        (u, by_url[u])
        for u in fuse(list(by_url), scores)
        if semantic[u] >= RELEVANCE_MIN and (ranks[u] >= bar or _named(u, pages[u][0], successors))
    ]


def _named(url: str, title: str, names: set[str]) -> bool:
    """Is the page at ``url`` titled ``title`` one of ``names`` (a title, or a name its
    title or address holds: "Widget layout-2", "8xx")?"""
    where = f"{title} {url}".casefold()
    return any(name in where for name in names)


WIDE = 16  # a window search reads this many times the new pages it keeps
PROBE_SHARE = 5  # the probe keeps this many times the new pages a search keeps
HOT_MIN = 2  # new pages the question-level probe must place in a section to search it
HOT_SHARE = 1 / 3  # at most this share of sections gets a follow-up search, busiest first
PAGE_TEXT = 4000  # the text of a page its placement reads
FEEDBACK_HITS = 20  # new pages the search with the report's own words brings in
BACKGROUND_PAGES = 400  # the collection's pages its words are set against
