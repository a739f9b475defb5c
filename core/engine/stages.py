"""The update engine: one update run as named stages — ``refresh``, ``discover``,
``prune``, ``propose`` — then review, then ``commit``.

Every stage has one signature: it takes the run's state (``Update``), reads what the
stages before it found and adds its own. The engine runs them in order and meters each
(``CostMeter.stage``: a stage's own time, the writer calls and fetches inside it counted
under their own names), so no stage times itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from core.dates import as_utc, day
from core.domain.citations import cited_markers
from core.domain.facets import facets_of
from core.domain.placement import facet_fits, facet_of, facet_sections, missing_facets, place
from core.domain.prune import words
from core.domain.report_settings import settings_of
from core.domain.source_plan import (
    SourcePlan,
    budget_of,
    plan_sources,
    section_to_yield,
    sections_to_split,
)
from core.engine.audit import Actor
from core.engine.claims import claims_of
from core.engine.costs import CostMeter
from core.engine.discovery import PAGE_TEXT, discover
from core.engine.evidence import Checked, Found, pool_summary, refresh
from core.engine.headings import pool_titles, retitle_stale
from core.engine.overview import DERIVED_KEYS
from core.engine.report_proposals import (
    merge_repeated_facts,
    orphan_target,
    propose_added,
    propose_derived,
)
from core.engine.review import commit_run, proposals_of
from core.engine.run_context import RunContext
from core.engine.section_evidence import check_claims, title_of
from core.engine.section_proposals import (
    Drafting,
    extend_together,
    propose_section,
    section_case,
)
from core.errors import EvergreenError
from core.sources.registry import Providers
from core.states import TEXT_CHANGES, Action, ChangeKind, RunStatus
from core.store.models import Report, ReportVersion, SectionProposal, Snapshot, UpdateRun
from core.store.repository import citations_of, get_version, sections_of
from core.writers.base import BudgetExceeded, Writer, WriterFailed


@dataclass
class Update(RunContext):
    """One update run's state: what it starts from, and what each stage found."""

    cfg: dict[str, Any]  # the report's settings, every one with its value
    base: ReportVersion  # the version being updated
    sections: list[Any]
    cited: dict[int, Snapshot]  # marker → the snapshot the version cites
    checked: list[Checked] = field(default_factory=list)  # refresh
    found: list[Found] = field(default_factory=list)  # discover, then prune
    flags: list[str] = field(default_factory=list)  # run-level problems
    plan: SourcePlan | None = None  # prune
    assigned: dict[str, list[Found]] = field(default_factory=dict)  # section key → new pages
    orphans: list[Found] = field(default_factory=list)  # new pages no section takes
    #: a part of the question the report has no section for → the new pages about it
    facet_pages: dict[str, list[Found]] = field(default_factory=dict)
    splits: dict[str, list[Found]] = field(default_factory=dict)  # full section → its overflow
    #: full section → the sources cut so that a section could give way to its split
    made_room: dict[str, list[int]] = field(default_factory=dict)
    proposals: list[SectionProposal] = field(default_factory=list)  # propose

    @classmethod
    def start(
        cls,
        session: Session,
        report: Report,
        run: UpdateRun,
        meter: CostMeter,
        providers: Providers,
        writer: Writer,
    ) -> Update:
        base = get_version(session, report)
        return cls(
            session=session,
            report=report,
            run=run,
            meter=meter,
            providers=providers,
            writer=writer,
            cfg=settings_of(report.settings).model_dump(),
            base=base,
            sections=sections_of(session, base.id),
            cited=citations_of(session, base.id),
        )

    @property
    def force(self) -> bool:
        """Read every cited page whole, whatever the shared pool holds."""
        return bool((self.run.summary or {}).get("force_recheck"))

    @property
    def by_marker(self) -> dict[int, Checked]:
        return {c.marker: c for c in self.checked}

    @property
    def own(self) -> list[Any]:
        """The sections the writer keeps (the overview and key facts are derived)."""
        return [s for s in self.sections if s.key not in DERIVED_KEYS]


Stage = Callable[[Update], None]


def refresh_stage(u: Update) -> None:
    """Every cited source fetched again as of the run's date, and how it changed."""
    u.checked = refresh(
        u.session,
        u.report,
        dict(u.cited),
        base_as_of=u.base.as_of,
        as_of=u.run.as_of,
        fetcher=u.providers.fetcher,
        temporal=u.providers.temporal,
        meter=u.meter,
        run_id=u.run.id,
        tau=u.cfg["tau"],
        concurrency=u.cfg["concurrency"],
        progress=u.progress,
        force=u.force,
    )


def discover_stage(u: Update) -> None:
    """New pages in the window since the base version. Only window activity says
    something may be new for a section; a changed source does not (refresh handles it),
    so it buys no search. Search down: the refreshed evidence still counts."""
    own = [(s.key, s.heading, s.body) for s in u.own]
    room = int(u.cfg.get("max_sections") or 0) - sum(1 for s in u.own if s.level >= 1)
    try:
        u.found = discover(
            u.session,
            u.report,
            question=u.report.query,
            # the report's own sections: a page placed in the derived overview or key
            # facts reached no writer and no review (12% of the Swift bench's new pages)
            sections=own,
            facet_places=missing_facets(u.report.query, own, room),
            hot_sections=set(),
            window=(as_utc(u.base.as_of), as_utc(u.run.as_of)),
            cited_sources={snap.source_id for snap in u.cited.values()},
            search=u.providers.search,
            fetcher=u.providers.fetcher,
            meter=u.meter,
            run_id=u.run.id,
            per_query=u.cfg["discover_results"],
            concurrency=u.cfg["concurrency"],
            progress=u.progress,
            temporal=u.providers.temporal,
            force=u.force,
        )
    except EvergreenError as exc:
        u.found = []
        u.flags.append(f"discovery failed, no new evidence searched: {exc}")
    checked = u.checked
    if checked and all(c.kind == ChangeKind.GONE for c in checked) and not u.found:
        raise EvergreenError(
            f"All {len(checked)} sources of report {u.report.id} are gone as of "
            f"{day(u.run.as_of)} and no new evidence was found; nothing to update from."
        )


def prune_stage(u: Update) -> None:
    """Which sources the report keeps within its budget, and where each new page goes;
    a page that does not make the cut goes to no writer."""
    checked = u.checked
    u.plan = plan_sources(
        u.report.query,
        {
            c.marker: (c.current.title or "", c.current.content)
            for c in checked
            if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
        },
        {
            c.marker: (c.previous.title or "", c.previous.content)
            for c in checked
            if c.kind in TEXT_CHANGES and c.previous is not None and c.previous.content
        },
        {f.evidence.marker: (f.evidence.title, f.evidence.content) for f in u.found},
        budget_of(u.cfg),
        [words(s.body) for s in u.own],
        collection=u.providers.search,
    )
    if u.plan.scores:
        u.found = [f for f in u.found if f.evidence.marker in u.plan.admitted]
    assigned: dict[str | None, list[Found]] = {}
    for f in u.found:
        assigned.setdefault(f.section_key, []).append(f)
    for key in list(assigned):
        name = facet_of(key)
        if name is not None:  # about a part of the question with no section yet
            u.facet_pages[name] = assigned.pop(key)
    orphans = assigned.pop(None, [])
    own = u.own
    if orphans and facets_of(u.report.query):
        _by_facet(u, orphans, assigned)
        orphans = []
    if len(orphans) == 1 and any(s.level >= 1 for s in own):
        target = orphan_target(orphans[0], own)  # one stray page: the closest section
        if target is not None:
            assigned.setdefault(target, []).append(orphans[0])
        orphans = []
    u.assigned = {k: v for k, v in assigned.items() if k is not None}
    u.orphans = orphans
    u.splits = _split_full(u)


def _by_facet(u: Update, orphans: list[Found], assigned: dict[str | None, list[Found]]) -> None:
    """Pages no section takes, in a report whose question names its parts: each goes to
    the part whose name it shares most words with (``facet_fits``) — to its section, or
    to a new section for it (``u.facet_pages``) while the report has room for one (else
    to the section it is closest to). A page about none of the parts is not written up:
    it stays in the evidence pool, and the run says so."""
    fits = facet_fits(
        [(f.evidence.url, f.evidence.title, f.evidence.content[:PAGE_TEXT]) for f in orphans],
        u.report.query,
    )
    body = [s for s in u.own if s.level >= 1]
    own = {
        f.name: key
        for f, key in facet_sections(u.report.query, [(s.key, s.heading, s.body) for s in body])
    }
    room = int(u.cfg.get("max_sections") or 0) - len(body) - len(u.facet_pages)
    left: list[Found] = []
    for f in orphans:
        name = fits[f.evidence.url]
        if name is None:
            left.append(f)
        elif own.get(name) is not None:
            assigned.setdefault(own[name], []).append(f)
        elif name in u.facet_pages or room > 0:
            room -= name not in u.facet_pages
            u.facet_pages.setdefault(name, []).append(f)
        elif (target := orphan_target(f, body)) is not None:
            assigned.setdefault(target, []).append(f)
        else:
            left.append(f)
    if left:
        out = {f.evidence.marker for f in left}
        u.found = [f for f in u.found if f.evidence.marker not in out]
        titles = ", ".join(f"“{f.evidence.title}”" for f in left)
        said = (
            "1 new page is about none of the question's parts and was not written up; it stays"
            if len(left) == 1
            else f"{len(left)} new pages are about none of the question's parts and were not "
            "written up; they stay"
        )
        u.flags.append(f"{said} in the evidence pool: {titles}")


def _split_full(u: Update) -> dict[str, list[Found]]:
    """Section key → the new pages that leave that full section to open one of their
    own (taken out of ``u.assigned``; ``sections_to_split``). With no room for another
    section (``max_sections``), the least relevant section may give way — never one of
    the question's own facets: its sources are cut (``section_to_yield``), the cut
    proposed for review like any other."""
    plan, budget = u.plan, budget_of(u.cfg)
    body = [s for s in u.own if s.level >= 1]
    cited = {s.key: cited_markers(s.body) for s in body}
    full = {s.key: (words(s.body), len(set(cited[s.key]))) for s in body}
    incoming = {k: len(v) for k, v in u.assigned.items()}
    free = (
        int(u.cfg.get("max_sections") or 0)
        - len(body)
        - (1 if u.orphans else 0)
        - len(u.facet_pages)
    )
    split = sections_to_split(full, incoming, budget, max(free, 1))
    if split and free < 1:
        if plan is None or not plan.scores:
            return {}
        facets = {f.name.casefold() for f in facets_of(u.report.query)}
        markers = {
            s.key: cited[s.key]
            for s in body
            if s.key not in split and s.heading.casefold() not in facets
        }
        gives_way = section_to_yield(
            markers, plan.scores, [f.evidence.marker for f in u.assigned[split[0]]], plan.news
        )
        if gives_way is None:
            return {}
        heading = next(s.heading for s in body if s.key == split[0])
        why = (
            f"its section makes room for a new one: the new pages on the subject of "
            f"“{heading}” are more about the question"
        )
        plan.cuts.update({m: why for m in markers[gives_way]})
        u.made_room[split[0]] = list(markers[gives_way])
        out = {key: u.assigned.pop(key) for key in split}
        _place_again(u, u.assigned.pop(gives_way, []), [s for s in body if s.key != gives_way])
        return out
    return {key: u.assigned.pop(key) for key in split}


def _place_again(u: Update, pages: list[Found], sections: list[Any]) -> None:
    """The new pages of a section that gives way go to the section each fits best of
    ``sections`` (the first, when they fit none): a section that still took new pages
    would stay, and the report would hold more sections than its ``max_sections``. (The
    full section whose new pages split off may take one: its word budget then decides.)"""
    if not pages or not sections:
        return
    placed = place(
        [(f.evidence.url, f.evidence.title, f.evidence.content[:PAGE_TEXT]) for f in pages],
        [(s.key, s.heading, s.body) for s in sections],
    )
    for f in pages:
        key = placed[f.evidence.url][0] or sections[0].key
        u.assigned.setdefault(key, []).append(f)


def propose_stage(u: Update) -> None:
    """A proposal per section, new sections for pages no section takes, each fact stated
    once, then the overview and key facts rebuilt from the proposals. A resumed run keeps
    the proposals it already wrote (no second writer call)."""
    done = {p.key: p for p in proposals_of(u.session, u.run.id)}
    added = _new_sections(u, done)  # first: a split no writer could plan makes no room
    _propose_sections(u, done)
    _add_new_sections(u, added)
    if u.plan is not None and u.plan.scores:  # something changed: state each fact once
        merge_repeated_facts([p for p in u.proposals if p.key not in done])
    titles = {m: title_of(c) for m, c in u.by_marker.items()}
    titles |= {f.evidence.marker: f.evidence.title for f in u.found}
    retitle_stale(
        [p for p in u.proposals if p.key not in done],
        pool_titles(u.session, u.report.id),
        titles,
        u.plan.scores if u.plan is not None else {},
        keep={f.name.casefold() for f in facets_of(u.report.query)},
    )
    u.progress("updating the overview")
    sections, by_marker = u.sections, u.by_marker
    for proposal in propose_derived(
        u.report.query,
        u.run,
        [s for s in sections if s.key in DERIVED_KEYS and s.key not in done],
        u.proposals,
        by_marker,
        u.found,
        {
            s.key: check_claims(claims_of(u.session, s, u.cited), by_marker)
            for s in sections
            if s.key in DERIVED_KEYS
        },
        {s.key: k for k, s in enumerate(sections)},
        collection=u.providers.search,
        since=u.base.as_of.date(),
    ):
        u.session.add(proposal)
        u.proposals.append(proposal)


def _propose_sections(u: Update, done: dict[str, SectionProposal]) -> None:
    assert u.plan is not None, "prune comes before propose"
    drafting = Drafting(u.report, u.run, u.meter, u.writer, u.by_marker, u.plan, budget_of(u.cfg))
    sections = u.sections
    cases = {
        section.key: section_case(
            drafting,
            section,
            u.assigned.get(section.key, []),
            k,
            claims_of(u.session, section, u.cited),
        )
        for k, section in enumerate(sections)
        if section.key not in done and section.key not in DERIVED_KEYS
    }
    gaining = sum(c.gains_only for c in cases.values())
    if gaining > 1:
        u.progress(f"extending {gaining} sections")
    drafted = extend_together(drafting, list(cases.values()))
    for k, section in enumerate(sections):
        if section.key in done:
            u.proposals.append(done[section.key])
            continue
        if section.key in DERIVED_KEYS:
            continue  # rebuilt from the other sections afterwards
        u.progress(f"writing section {k + 1}/{len(sections)}")
        proposal = propose_section(drafting, cases[section.key], drafted.get(section.key))
        u.session.add(proposal)
        u.proposals.append(proposal)


def _new_sections(
    u: Update, done: dict[str, SectionProposal]
) -> list[tuple[str | None, SectionProposal]]:
    """New sections, each with the full section it splits off (None: pages no section
    takes), written before the report's own sections are proposed: when the writer
    cannot plan a split, the section that was to give way for it keeps its sources. A
    resumed run keeps the ones it already wrote."""
    added = [p for p in done.values() if p.action == Action.ADD]
    if added or not (u.orphans or u.splits or u.facet_pages):
        return [(None, p) for p in added]
    u.progress("writing new sections")
    headings = {s.key: s.heading for s in u.sections}
    # (the full section split, or None; its pages; the part of the question they are about)
    groups: list[tuple[str | None, list[Found], str | None]] = [
        (None, pages, name) for name, pages in u.facet_pages.items()
    ]
    groups += [(None, u.orphans, None)] if u.orphans else []
    groups += [(key, pages, None) for key, pages in u.splits.items()]
    sections = list(u.sections)
    out: list[tuple[str | None, SectionProposal]] = []
    for parent, pages, facet in groups:
        within = headings[parent] if parent is not None else None
        try:
            new_sections = propose_added(
                u.report, u.run, u.meter, u.writer, pages, sections, within=within, facet=facet
            )
        except (WriterFailed, BudgetExceeded) as exc:
            # adding sections is optional: the pages stay in the pool for a later update
            new_sections = []
            where = f"are more than “{within}” holds" if within else "fit no section"
            u.flags.append(
                f"needs attention: {len(pages)} new page(s) {where} and no new section "
                f"could be planned ({exc}); they stay in the evidence pool"
            )
            if parent is not None and u.plan is not None:
                for m in u.made_room.pop(parent, []):
                    u.plan.cuts.pop(m, None)
        sections.extend(new_sections)
        out.extend((parent, p) for p in new_sections)
    return out


def _add_new_sections(u: Update, added: list[tuple[str | None, SectionProposal]]) -> None:
    """The new sections join the proposals; each full section says where its pages went."""
    noted: set[str] = set()
    for parent, proposal in added:
        u.session.add(proposal)
        u.proposals.append(proposal)
        if parent is not None and parent not in noted:
            noted.add(parent)
            _note_split(u, parent, len(u.splits.get(parent, [])), proposal.heading)


def _note_split(u: Update, parent: str, n: int, heading: str) -> None:
    """The full section's proposal (section key ``parent``) says where its new pages
    went."""
    for p in u.proposals:
        if p.key == parent:
            note = (
                f"It is at its word budget: its {n} new sources went to a section of their "
                f"own, “{heading}”."
            )
            said = (p.rationale or "").replace(" and nothing new was found", "")
            p.rationale = f"{said} {note}".strip()
            return


STAGES: tuple[tuple[str, Stage], ...] = (
    ("refresh", refresh_stage),
    ("discover", discover_stage),
    ("prune", prune_stage),
    ("propose", propose_stage),
)


def prepare_review(u: Update) -> dict[str, Any]:
    """Run the stages up to review, then leave the run awaiting it."""
    for name, stage in STAGES:
        with u.meter.stage(name):
            stage(u)
    actions = dict.fromkeys(("keep", "revise", "extend", "add", "remove"), 0)
    for p in u.proposals:
        actions[p.action] += 1
    run = u.run
    run.status = RunStatus.AWAITING_REVIEW
    run.progress = "awaiting review"
    run.summary = {
        "actions": actions,
        "evidence": pool_summary(u.checked, u.found),
        "checked": [c.as_dict() for c in u.checked],
        "flags": u.flags,
    }
    u.session.add(run)
    return {"actions": actions, "evidence": run.summary["evidence"]}


def commit_stage(u: Update, actor: Actor) -> None:
    """Commit every proposal as approved (``update --approve-all``), in ``actor``'s name;
    otherwise commit follows the analyst's review (``core.engine.review.commit_run``)."""
    with u.meter.stage("commit"):
        commit_run(u.session, u.run, approve_all=True, actor=actor)
