"""Proposals about the report as a whole rather than one existing section: new sections
for new pages no section takes, each fact stated once across sections, and the overview
and key facts rebuilt from the proposed sections and the newest snapshots."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from datetime import date
from typing import Any

from core.domain.expectations import past_due_notes
from core.domain.placement import place
from core.domain.prune import merge_repeats
from core.domain.relevance import Relevance
from core.domain.report_state import SectionDoc, make_section_keys
from core.domain.text import clean_inline, terms
from core.engine.costs import CostMeter
from core.engine.discovery import PAGE_TEXT
from core.engine.draft_check import check_draft
from core.engine.evidence import Checked, Found
from core.engine.overview import (
    DERIVED_KEYS,
    KEY_FACTS_KEY,
    Since,
    cited_pages,
    derived_sections,
    fact_rows,
    key_facts_body,
    past_due_rows,
    table_statuses,
)
from core.engine.rationales import corrections, draft_flags, sources_fit
from core.engine.run_work import call_writer
from core.engine.section_evidence import found_row
from core.states import Action, ChangeKind, Decision
from core.store.models import Report, SectionProposal, UpdateRun
from core.writers.base import BudgetExceeded, Evidence, OutlineItem, Writer, WriterFailed
from core.writers.outline_clusters import part_title, shared_phrase


def propose_added(
    report: Report,
    run: UpdateRun,
    meter: CostMeter,
    writer: Writer,
    orphans: list[Found],
    sections: list[Any],
    within: str | None = None,
    facet: str | None = None,
) -> list[SectionProposal]:
    """New sections for new pages that fit no existing one: an outline from the writer,
    then one section per heading; a section the writer fails on is left out (its pages
    stay in the pool for a later update). ``within``: the heading of the full section
    the pages overflow; they make one section, named as a part of it. ``facet``: the
    part of the question the pages are about, which the report has no section for yet;
    they make its section, under its name (no outline to ask the writer for)."""
    bundle = [f.evidence for f in orphans]
    if facet is not None:
        outline = [OutlineItem(facet, 2, tuple(e.marker for e in bundle))]
    else:
        outline = _outline(
            report.query, meter, writer, bundle, within, [s.heading for s in sections]
        )
    existing = [s.heading for s in sections]
    outline = _distinct(outline, bundle, report.query, existing)
    keys = make_section_keys(existing + [item.heading for item in outline])[len(existing) :]
    out = []
    for n, (key, item) in enumerate(zip(keys, outline, strict=True)):
        mine = [e for e in bundle if e.marker in item.markers]
        try:
            draft = call_writer(
                meter,
                "write",
                writer.name,
                lambda item=item, mine=mine: writer.write_section(
                    report.query, item.heading, mine, brief=True
                ),
            )
        except (WriterFailed, BudgetExceeded):
            continue  # the new pages stay in the pool; a later update can place them
        checked = check_draft(
            draft.body, "", {e.marker: e.content for e in mine}, list(draft.quotes)
        )
        if not checked.body.strip():
            continue
        out.append(
            SectionProposal(
                run_id=run.id,
                key=key,
                heading=item.heading,
                level=item.level,
                order=len(sections) + n,
                action=Action.ADD,
                old_text=None,
                new_text=checked.body,
                flags=[*draft_flags(checked), *past_due_notes(checked.body, run.as_of.date())],
                evidence=[found_row(f) for f in orphans if f.evidence.marker in item.markers],
                quotes=list(draft.quotes),
                rationale=" ".join([_why_added(len(mine), within, facet), *corrections(checked)]),
            )
        )
    return out


def _distinct(
    outline: list[OutlineItem], bundle: list[Evidence], question: str, existing: list[str]
) -> list[OutlineItem]:
    """``outline`` with each heading the report (or an item before it) already has made
    a part of it, named after its own pages ("Market rules: Storage Investment Credit"):
    two sections under one heading read as one subject said twice."""
    taken = {t.strip().casefold() for t in existing}
    out = []
    for item in outline:
        heading = item.heading
        if heading.strip().casefold() in taken:
            mine = [e for e in bundle if e.marker in item.markers] or bundle
            heading = part_heading(heading, heading, mine, question, taken)
        taken.add(heading.strip().casefold())
        out.append(OutlineItem(heading, item.level, item.markers))
    return out


def _outline(
    question: str,
    meter: CostMeter,
    writer: Writer,
    bundle: list[Evidence],
    within: str | None,
    taken: Collection[str],
) -> list[OutlineItem]:
    """The writer's outline for new pages: a section per three of them, or — the overflow
    of the full section headed ``within`` — one, named as a part of it."""
    most = 1 if within else max(1, len(bundle) // 3)
    outline = call_writer(
        meter, "outline", writer.name, lambda: writer.propose_outline(question, bundle, most)
    )
    if not (within and outline):
        return outline
    markers = tuple(m for item in outline for m in item.markers)
    heading = part_heading(within, outline[0].heading, bundle, question, taken)
    return [OutlineItem(heading, outline[0].level, markers)]


def _why_added(n: int, within: str | None, facet: str | None = None) -> str:
    sources = "1 new source is" if n == 1 else f"{n} new sources are"
    if facet is not None:
        return f"{sources} about “{facet}”, a part of the question the report had no section for."
    if within is None:
        return f"{sources_fit(n)} no existing section."
    return (
        f"{sources} about “{within}”, which is at its word budget: they get a section of their own."
    )


def part_heading(
    parent: str,
    cluster: str,
    pages: list[Evidence],
    question: str,
    taken: Collection[str] = (),
) -> str:
    """The heading of a section split off ``parent`` (itself a part: its root, the text
    before ": "), as "Parent: part". The part is the ``cluster`` heading the outline gave
    the pages when it is a phrase that says something the parent and the question do
    not (two content words or more, not a list of title words like "Add, property and
    swift"); else a phrase two of the pages' titles share that says a word more than the
    parent and the question ("Type Parameter" from "Type Parameter Syntax" and "Type
    Defaults for Type Parameters"); otherwise the most relevant page's title, its first
    clause, whole: words it shares with the parent are often half of a compound ("Task
    Naming", "Freestanding Declaration Macros"). A lone word ("Wheel" under "Wheels")
    names no part of anything. A heading the report already has (``taken``, any case)
    is passed over for the next: a metaprogramming report had two sections headed
    "Macro system: Package Manager"."""
    root = parent.split(": ", 1)[0]
    used = {t.strip().casefold() for t in taken}
    for part in _parts(root, cluster, pages, question):
        heading = f"{root}: {part}"
        if heading.casefold() not in used:
            return heading
    return root if root.casefold() not in used else f"{root}: {clean_inline(pages[0].title)}"


def _parts(root: str, cluster: str, pages: list[Evidence], question: str) -> Iterator[str]:
    """The names ``part_heading`` may give a part of ``root``, best first."""
    said = set(terms(root)) | set(terms(question))
    listed = _WORD_LIST.fullmatch(cluster) is not None
    if not listed and len([t for t in terms(cluster) if t not in said]) >= 2:
        yield cluster
    shared = shared_phrase([clean_inline(page.title) for page in pages])
    if shared and any(t not in said for t in terms(shared)):  # "Type Parameter"
        yield shared
    for page in sorted(pages, key=lambda e: (e.rank, e.marker)):
        title = part_title(page.title)
        if title and title.casefold() != root.casefold():  # never "Async/await: Async/await"
            yield title


#: the offline outline's heading for pages that share no phrase: their common title
#: words listed ("Generic and typing", "Add, property and swift")
_WORD_LIST = re.compile(r"[^\W_][\w-]*(?:, [^\W_][\w-]*)* and [^\W_][\w-]*")


def merge_repeated_facts(proposals: list[SectionProposal]) -> None:
    """One fact, one sentence: a sentence that repeats an earlier one (in any section) is
    removed, its citation joining the earlier one's when both are worded alike
    (``merge_repeats``)."""
    live = [p for p in proposals if p.action != Action.REMOVE and p.new_text and p.level >= 1]
    merged, n = merge_repeats({p.key: p.new_text or "" for p in live})
    if not n:
        return
    for p in live:
        text = merged[p.key]
        if text == p.new_text:
            continue
        note = (
            "A sentence repeated a fact stated elsewhere; it was removed (its citation "
            "joined the first where both were worded alike)."
        )
        p.new_text = text
        p.rationale = f"{p.rationale} {note}".strip()
        if not text.strip():
            p.action = Action.REMOVE
        elif p.action == Action.KEEP:
            p.action = Action.REVISE
        p.decision = Decision.PENDING


def propose_derived(
    question: str,
    run: UpdateRun,
    existing: list[Any],
    proposals: list[SectionProposal],
    by_marker: dict[int, Checked],
    found: list[Found],
    checks: dict[str, list[dict[str, Any]]],
    order: dict[str, int],
    collection: object = None,
    since: date | None = None,
) -> list[SectionProposal]:
    """The overview and key-facts sections rebuilt from the proposed sections and the
    newest snapshots: kept when they come out the same, revised, added or removed.
    ``collection``: where the pages come from (relevance is centred on it); ``since``:
    the date of the version updated (the overview lists the statuses changed since)."""
    quiet = all(p.action == Action.KEEP for p in proposals) and not found
    have = {s.key: s for s in existing}
    docs = [
        SectionDoc(p.key, p.heading, p.level, p.new_text or "")
        for p in sorted(proposals, key=lambda p: p.order)
        if p.action != Action.REMOVE and p.key not in DERIVED_KEYS
    ]
    pages = {
        m: (c.current.title or "", c.current.content)
        for m, c in by_marker.items()
        if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
    }
    pages.update({f.evidence.marker: (f.evidence.title, f.evidence.content) for f in found})
    if quiet:  # nothing moved: only time did (nor is anything added to an imported report)
        return [_quiet_derived(run, s, docs, pages, order, checks) for s in existing]
    built = {
        d.key: d
        for d in derived_sections(
            docs,
            pages,
            lambda h: Relevance(f"{h}: {question}", collection, as_asked=True).scores,
            as_of=run.as_of.date(),
            since=_since(have, since),
        )
    }
    out = []
    for key in DERIVED_KEYS:
        old, new = have.get(key), built.get(key)
        if old is None and new is None:
            continue
        heading = (new or old).heading
        out.append(
            _derived_proposal(
                run,
                key,
                heading,
                order.get(key, 0),
                old.body if old else None,
                new.body if new else None,
                checks,
            )
        )
    return out


def _since(have: Mapping[str, Any], as_of: date | None) -> Since | None:
    """The version updated, as its key-facts table stood (None: no table, or no date)."""
    table = have.get(KEY_FACTS_KEY)
    if table is None or as_of is None:
        return None
    return Since(as_of, table_statuses(table.body))


def _quiet_derived(
    run: UpdateRun,
    section: Any,
    docs: list[SectionDoc],
    pages: dict[int, tuple[str, str]],
    order: dict[str, int],
    checks: dict[str, list[dict[str, Any]]],
) -> SectionProposal:
    """A derived section in an update where nothing moved: kept as it stands, but for a
    key-facts table whose values now include one past its date (a plan's month is over)."""
    new = section.body
    if section.key == KEY_FACTS_KEY:
        cited = [m for d in docs for m in d.markers]
        rows = fact_rows(cited, pages)
        due = past_due_rows(rows, cited_pages(cited, pages), run.as_of.date())
        if due:  # the table as derived_sections makes it, its rows read once
            new = key_facts_body(rows, due, run.as_of.date().isoformat())
    why = "A value it gives is now past its date." if new != section.body else None
    return _derived_proposal(
        run, section.key, section.heading, order[section.key], section.body, new, checks, why
    )


def _derived_proposal(
    run: UpdateRun,
    key: str,
    heading: str,
    order: int,
    old: str | None,
    new: str | None,
    checks: dict[str, list[dict[str, Any]]],
    why: str | None = None,
) -> SectionProposal:
    if old is None:
        action, why = (
            "add",
            "New: built from the report's sections and its sources' declared facts.",
        )
    elif new is None:
        action, why = "remove", "No cited source declares a status any more."
    elif new == old:
        action, why = (
            "keep",
            "Unchanged: the sections and declared facts it is built from did not change.",
        )
    else:
        action, why = (
            "revise",
            why or ("Rebuilt from the revised sections and the newest declared facts."),
        )
    return SectionProposal(
        run_id=run.id,
        key=key,
        heading=heading,
        level=2,
        order=order,
        action=action,
        old_text=old,
        new_text=new if new is not None else "",
        decision=Decision.APPROVED if action == Action.KEEP else Decision.PENDING,
        rationale=why,
        claims=checks.get(key, []),
    )


def orphan_target(orphan: Found, sections: list[Any]) -> str | None:
    """The section a single unplaced page fits best, if it fits any at all."""
    ev = orphan.evidence
    placed = place(
        [(ev.url, ev.title, ev.content[:PAGE_TEXT])], [(s.key, s.heading, s.body) for s in sections]
    )
    key, score = placed[ev.url]
    if key is None and score <= 0:
        return None
    if key is not None:
        return key
    return next((s.key for s in sections if s.heading), None)
