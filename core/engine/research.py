"""From-scratch research (the baseline, "OEDR"): plan → search → fetch → pool →
outline → write → version 1. Also used for rebuilds at a later date. (The run that does
it, from registering the new report to its result: ``core.engine.creation``.)"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlmodel import Session

from core.dates import day, utcnow
from core.domain.facets import facets_of
from core.domain.first_choice import assign, choice_floor, facet_choice, first_choice
from core.domain.prune import fit_words, keep_fact_lines, merge_repeats
from core.domain.relevance import Relevance
from core.domain.report_settings import ReportSettings, settings_of
from core.domain.report_state import SectionDoc, make_section_keys
from core.domain.source_plan import Budget, budget_of, superseded_by
from core.engine.costs import CostMeter
from core.engine.fetching import fetch_many
from core.engine.overview import DERIVED_HEADINGS, derived_sections
from core.engine.run_context import RunContext
from core.engine.run_work import call_writer
from core.engine.version_commit import SectionDraft, commit_version
from core.errors import EvergreenError
from core.sources.base import FetchedPage, SearchResult
from core.sources.registry import Providers
from core.states import ChangeKind, RunStatus
from core.store.models import Report, UpdateRun
from core.store.pool import get_or_create_source, pool_entry, pool_snapshots
from core.store.snapshot_store import store_snapshot
from core.writers.base import BudgetExceeded, Evidence, Writer, WriterFailed


def preamble(question: str, writer: Writer) -> SectionDoc:
    return SectionDoc(
        key="preamble",
        heading="",
        level=0,
        body=f"**Question:** {question}\n\n_{writer.mode_note}_",
    )


@dataclass
class Research(RunContext):
    """One from-scratch run's state: what it starts from and what each step found."""

    as_of: datetime
    cfg: ReportSettings
    facets: list[Any] = field(default_factory=list)  # the question's parts, if it names them
    ranked: dict[str, tuple[int, SearchResult]] = field(default_factory=dict)  # best position
    queries: list[str] = field(default_factory=list)  # what was searched for
    per_query: list[list[str]] = field(default_factory=list)  # each query's hits, in order
    evidence: dict[str, Evidence] = field(default_factory=dict)  # url → pooled page
    chosen: list[str] = field(default_factory=list)  # the pages the report starts from
    outline: list[Any] = field(default_factory=list)
    per_section: list[list[Evidence]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @property
    def question(self) -> str:
        return self.report.query

    def search(self, query: str, k: int) -> list[SearchResult]:
        search = self.providers.search
        self.meter.add("search", search.name, searches=1)
        return search.search(query, max_results=k, end_date=self.as_of)


def research(
    session: Session,
    report: Report,
    run: UpdateRun,
    meter: CostMeter,
    providers: Providers,
    writer: Writer,
    as_of: datetime,
) -> dict[str, Any]:
    """Plan and search, choose the pages, outline (with a search per section), write,
    then commit version 1."""
    r = Research(
        session, report, run, meter, providers, writer, as_of, settings_of(report.settings)
    )
    r.facets = list(facets_of(r.question))
    _search(r)
    relevance, floor = _choose(r)
    _outline(r, relevance, floor)
    return _write_and_commit(r, relevance)


def _search(r: Research) -> None:
    """The question's facets (or the writer's planned queries), each searched as of the
    run's date; each page keeps its best position in any query's results."""
    question, cfg, writer = r.question, r.cfg, r.writer
    if r.facets:  # each part of the question is searched for on its own
        queries = [question, *(f.query for f in r.facets)]
    else:
        queries = call_writer(
            r.meter, "plan", writer.name, lambda: writer.plan_queries(question, cfg.queries)
        )
    r.queries = list(queries)
    r.progress(f"searching ({len(queries)} queries)")
    with r.meter.stage("search"):
        for query in queries:
            hits = r.search(query, cfg.results_per_query)
            r.per_query.append([h.url for h in hits])
            for pos, hit in enumerate(hits):
                if hit.url not in r.ranked or pos < r.ranked[hit.url][0]:
                    r.ranked[hit.url] = (pos, hit)
    if not r.ranked:
        raise EvergreenError(
            f"No search hits for this question as of {day(r.as_of)} in {r.report.source!r}; "
            "try broader wording, another source or a later date."
        )


def _choose(r: Research) -> tuple[Relevance, float]:
    """The pages the report starts from: fetched, scored against the question and each
    facet, chosen within the budget, pooled. Returns the relevance and the bar a page
    found for one section must reach."""
    ranked, cfg = r.ranked, r.cfg
    order = sorted(ranked, key=lambda u: (ranked[u][0], u))
    r.progress(f"fetching {len(order)} pages")
    pages = _fetch(r.meter, r.providers, order, r.as_of, cfg)
    if not pages:
        raise EvergreenError(f"None of the {len(order)} pages found could be fetched.")
    relevance = Relevance(r.question, r.providers.search)
    scores, per_facet = relevance.facet_scores(
        {u: (p.title, p.content) for u, p in pages.items()}, [f.query for f in r.facets]
    )
    budget = budget_of(cfg.model_dump())
    limit = cfg.results_per_query * 2
    if budget.sources > 0:  # a first report is born within its budget
        limit = min(limit, budget.sources)
    chosen = first_choice({u: ranked[u][0] for u in pages}, scores, limit=limit)
    if len(chosen) == len(pages) < limit:  # every page found is used: look further
        weakest = min(scores[u] for u in chosen)
        more = _fetch(r.meter, r.providers, _further_hits(r), r.as_of, cfg)
        fits = relevance.page_scores({u: (p.title, p.content) for u, p in more.items()})
        if any(fits[u] >= weakest for u in more):
            pages.update({u: p for u, p in more.items() if fits[u] >= weakest})
            scores, per_facet = relevance.facet_scores(
                {u: (p.title, p.content) for u, p in pages.items()}, [f.query for f in r.facets]
            )
            chosen = first_choice({u: ranked[u][0] for u in pages}, scores, limit=limit)
    if r.facets:
        chosen = facet_choice(r.per_query[1:], per_facet, scores, chosen, limit)
    if not chosen:
        raise EvergreenError(
            f"None of the {len(pages)} pages found is about the question as of "
            f"{day(r.as_of)}; try other wording, another source or a later date."
        )
    r.chosen = chosen
    r.evidence = _pool(r.session, r.report, r.run, {u: pages[u] for u in chosen}, r.as_of)
    r.outline = _planned_outline(r, assign(chosen, per_facet))
    return relevance, choice_floor(scores, len(pages), limit)  # section pages: the same bar


def _further_hits(r: Research) -> list[str]:
    """The pages the planned queries find in twice as many results, not found before.

    A question's planned queries often return the same few pages: on the sample's folder,
    "How is grid-scale battery storage developing in the Halvard interconnection?" planned
    two queries that found the same 8 pages, all of them on topic, so its first report
    cited 8 of the folder's 38 pages about it. When every page found is used, the search
    has more to give; what it gives must be at least as relevant as the weakest page
    already used (``_choose``). Reading further whenever the queries found fewer pages
    than the report may use lowered PEP precision (``BENCHMARKS.md``): there the searches
    had already reached pages off the question."""
    k = r.cfg.results_per_query
    new: list[str] = []
    with r.meter.stage("search"):
        for query in r.queries:
            try:
                hits = r.search(query, 2 * k)
            except EvergreenError as exc:  # optional: the report is written from what it has
                r.flags.append(f"the searches could not be read further: {exc}")
                break
            for pos, hit in enumerate(hits):
                if hit.url not in r.ranked:
                    r.ranked[hit.url] = (pos, hit)
                    new.append(hit.url)
    return new


def _planned_outline(r: Research, facing: dict[str, int]) -> list[Any]:
    writer, evidence = r.writer, r.evidence
    return call_writer(
        r.meter,
        "outline",
        writer.name,
        lambda: writer.propose_outline(
            r.question,
            list(evidence.values()),
            r.cfg.max_sections,
            [
                replace(
                    f, markers=tuple(evidence[u].marker for u in r.chosen if facing.get(u) == i)
                )
                for i, f in enumerate(r.facets)
            ],
        ),
    )


def _outline(r: Research, relevance: Relevance, floor: float) -> None:
    """Section-level retrieval, as a good from-scratch pipeline does (STORM-style): each
    section not one of the question's facets (searched for already) gets a search of its
    own; what it finds and is about the question joins the pool."""
    searched = {f.name.casefold() for f in r.facets}
    evidence, cfg = r.evidence, r.cfg
    with r.meter.stage("search"):
        for item in r.outline:
            by_marker = {e.marker: e for e in evidence.values()}
            if item.heading.casefold() in searched:
                r.per_section.append([by_marker[m] for m in item.markers])
                continue
            extra = [
                h.url
                for h in r.search(f"{item.heading} {r.question}", cfg.section_results)
                if h.url not in evidence
            ]
            got = _fetch(r.meter, r.providers, extra, r.as_of, cfg)
            fits = relevance.page_scores({u: (p.title, p.content) for u, p in got.items()})
            found = _pool(
                r.session,
                r.report,
                r.run,
                {u: p for u, p in got.items() if fits[u] >= floor},
                r.as_of,
                len(evidence),
            )
            evidence.update(found)
            by_marker = {e.marker: e for e in evidence.values()}
            r.per_section.append([by_marker[m] for m in item.markers] + list(found.values()))


def _drafts(r: Research) -> list[SectionDraft]:
    """The preamble and one draft per outlined section the writer could write."""
    # the overview and key-facts sections own their keys: a writer's "Overview" is another
    headings = [*DERIVED_HEADINGS, *(item.heading for item in r.outline)]
    keys = make_section_keys(headings)[len(DERIVED_HEADINGS) :]
    writer, question = r.writer, r.question
    drafts = [SectionDraft(preamble(question, writer), "new")]
    for n, (key, item, bundle) in enumerate(zip(keys, r.outline, r.per_section, strict=True)):
        r.progress(f"writing section {n + 1}/{len(r.outline)}")
        try:
            draft = call_writer(
                r.meter,
                "write",
                writer.name,
                lambda item=item, bundle=bundle: writer.write_section(
                    question, item.heading, bundle
                ),
            )
        except (WriterFailed, BudgetExceeded) as exc:
            label = "writer failed" if isinstance(exc, WriterFailed) else "budget exhausted"
            r.flags.append(f"section {item.heading!r} left out: {label}: {exc}")
            continue
        r.flags.extend(f"{item.heading}: {note}" for note in draft.notes)
        if draft.body.strip():
            doc = SectionDoc(key, item.heading, item.level, draft.body)
            drafts.append(SectionDraft(doc, quotes=draft.quotes))
    if len(drafts) == 1:
        raise EvergreenError(
            "No section could be written: " + ("; ".join(r.flags) or "the sources gave no text")
        )
    return drafts


def _write_and_commit(r: Research, relevance: Relevance) -> dict[str, Any]:
    """The sections written and tidied, the overview and key facts built from them, and
    version 1 committed."""
    session, report, run = r.session, r.report, r.run
    pages = {e.marker: (e.title, e.content) for e in r.evidence.values()}
    drafts = _tidy(_drafts(r), pages, relevance, budget_of(r.cfg.model_dump()))
    top = derived_sections(
        [d.doc for d in drafts],
        pages,
        lambda heading: (
            Relevance(f"{heading}: {r.question}", r.providers.search, as_asked=True).scores
        ),
        as_of=r.as_of.date(),
    )
    drafts[1:1] = [SectionDraft(doc, "new") for doc in top]
    run.summary = {**run.summary, "flags": r.flags}
    markers = pool_snapshots(session, report.id, r.as_of)
    version = commit_version(
        session, report, title=report.title, drafts=drafts, as_of=r.as_of, markers=markers, run=run
    )
    counts = version.metrics["claims"]
    if counts["unsupported"]:
        run.summary = {
            **run.summary,
            "flags": [
                *run.summary.get("flags", []),
                f"{counts['unsupported']} of {counts['claims']} cited sentences have no passage "
                "in their source that supports them; check them before relying on them",
            ],
        }
    run.status = RunStatus.COMMITTED
    run.finished_at = utcnow()
    session.add(run)
    cited = {m for d in drafts for m in d.doc.markers}
    return {
        "report_id": report.id,
        "version": version.number,
        "sections": sum(1 for d in drafts if d.doc.level >= 1),
        "sources": len(cited),
        "run_id": run.id,
        "claims": counts,
    }


def _tidy(
    drafts: list[SectionDraft],
    pages: dict[int, tuple[str, str]],
    relevance: Relevance,
    budget: Budget,
) -> list[SectionDraft]:
    """A first report held to the rules its updates keep: a superseded design only by
    its status line, each fact stated once, each section within its words."""
    superseded = {m for m, (_t, content) in pages.items() if superseded_by(content)}
    scores = {
        int(k): v for k, v in relevance.page_scores({str(m): p for m, p in pages.items()}).items()
    }
    bodies = {
        d.doc.key: keep_fact_lines(d.doc.body, superseded) for d in drafts if d.doc.level >= 1
    }
    bodies, _merged = merge_repeats(bodies)
    out = []
    for d in drafts:
        if d.doc.key not in bodies:
            out.append(d)
            continue
        body, _cut = fit_words(bodies[d.doc.key], scores, budget.words)
        if body.strip():
            out.append(replace(d, doc=replace(d.doc, body=body)))
    return out


def _fetch(
    meter: CostMeter, providers: Providers, urls: list[str], as_of: datetime, cfg: ReportSettings
) -> dict[str, FetchedPage]:
    """Fetch pages as of ``as_of``: url → page, in the given order, failures left out."""
    if not urls:
        return {}
    with meter.stage("fetch"):
        got = fetch_many(providers.fetcher, urls, as_of, meter, concurrency=cfg.concurrency)
    return {u: got[u].page for u in urls if got[u].page is not None}


def _pool(
    session: Session,
    report: Report,
    run: UpdateRun,
    pages: dict[str, FetchedPage],
    as_of: datetime,
    rank_offset: int = 0,
) -> dict[str, Evidence]:
    """Store the chosen pages in the report's pool; evidence keyed by URL in the given
    order (pages not chosen get no pool entry, so no reference number)."""
    out: dict[str, Evidence] = {}
    for rank, (url, page) in enumerate(pages.items()):
        source = get_or_create_source(session, url, page.title)
        entry = pool_entry(session, report, source)
        snap = store_snapshot(session, source, page, as_of=as_of, run_id=run.id)
        entry.latest_snapshot_id = snap.id
        entry.last_checked = utcnow()
        entry.status = ChangeKind.NEW
        session.add(entry)
        out[url] = Evidence(entry.marker, source.url, snap.title, page.content, rank_offset + rank)
    return out
