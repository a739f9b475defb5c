"""A section's heading kept about what the section cites (:func:`retitle_stale`).

A section can be named after a page's title: a part split off a full section, or a
first report's section when its pages share no theme at all ("Miscellaneous Python 3.0
Plans"); updates then cut the page and bring others, and the heading stayed: a typing
report carried "User Defined ("with") Statements" over its type-guard proposals to 2025.
When such a section changes anyway, its heading is made again from the pages it cites
now, and the proposal says so; a heading no page was named (a facet of the question, an
analyst's own) is never touched, nor is a section that does not change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlmodel import Session, col, select

from core.domain.citations import cited_markers
from core.domain.text import clean_inline, phrase_pattern
from core.engine.overview import DERIVED_KEYS
from core.states import Action
from core.store.models import PoolEntry, SectionProposal, Source
from core.writers.outline_clusters import part_title, shared_phrase, short_title


def pool_titles(session: Session, report_id: int) -> set[str]:
    """The titles of every page the report's pool holds (each as a heading would be)."""
    rows = session.exec(
        select(Source.title)
        .join(PoolEntry, col(PoolEntry.source_id) == Source.id)
        .where(PoolEntry.report_id == report_id)
    ).all()
    return {form for t in rows if t for form in _forms(t)}


def _forms(title: str) -> set[str]:
    """The ways a heading names a page: its title as a heading is, and the title's first
    clause without parentheses (as "Parent: part" headings name a part's page)."""
    return {f.casefold() for f in (short_title(title), part_title(title)) if f}


def _stale_names(heading: str, named: set[str], cites: set[str], keep: set[str]) -> bool:
    """Does ``heading`` name pages (``named``: their title forms) the section no longer
    cites (``cites``)? A heading that is a page's title; or "Root: part", where the root
    is a page's title (a part split off a section named after a page) and neither it nor
    the part names a page it cites; or a phrase of pages' titles that no title of a page it
    cites holds (a shared phrase, "Extension Modules", over the typing council's pages).
    ``keep``: names never touched (the facets)."""
    h = heading.strip().casefold()
    if h in keep:
        return False
    if h in named:
        return h not in cites
    if len(h.split()) >= 2 and _within(h, named) and not _within(h, cites):
        return True  # a phrase of pages' titles ("Extension Modules"), none of them cited
    root, sep, part = h.partition(": ")
    if not sep:
        return False
    if root in keep:  # a facet's part: the facet stays, the part may be named after a page
        return part in named and part not in cites
    if root not in named:
        return False
    return root not in cites and part not in cites


def _within(phrase: str, titles: set[str]) -> bool:
    """Is ``phrase`` a run of whole words of one of ``titles``?"""
    pattern = phrase_pattern(phrase)
    return any(pattern.search(t) for t in titles)


def retitle_stale(
    proposals: Sequence[SectionProposal],
    named: set[str],
    titles: Mapping[int, str],
    scores: Mapping[int, float],
    keep: set[str] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Give a section that changes, and whose heading — or a part of a "Parent: part"
    heading — is the title of a page (``named``: ``pool_titles``) it no longer cites, and
    no part the title of one it cites, a heading made from the titles of the pages it
    cites now (``titles``: marker → title; ``scores``: marker → relevance, the update's
    plan); unless that heading is another section's already. ``keep``: headings never
    renamed, as wholes or as roots (the question's facets, casefolded): a facet's part
    keeps its facet and is named again ("Macro system: Package Manager Resources" over
    expression-macro pages once that page had left), as does the part of a section the
    report still has ("Type Hints: Python Compatibility Version")."""
    taken = {p.heading.casefold() for p in proposals}
    for p in proposals:
        if p.action not in (Action.REVISE, Action.EXTEND) or p.key in DERIVED_KEYS:
            continue
        if p.level < 1 or not p.new_text:
            continue
        # most relevant first (then the oldest in the pool): updates cut the least
        # relevant pages, so a heading made from this one's title is not made again next
        # year, and it never names the section after its one page off the question
        markers = sorted(set(cited_markers(p.new_text)), key=lambda m: (-scores.get(m, 0.0), m))
        mine = [titles[m] for m in markers if titles.get(m)]
        cites = {f for t in mine for f in _forms(t)}
        if not mine or not _stale_names(p.heading, named, cites, keep):
            continue  # not named after pages, or still after one it cites
        # the phrase two of its pages' titles share ("Type Guards"), else its most
        # relevant page's title: a list of title words ("Access, extension and module") names
        # nothing an analyst would look for
        shared = shared_phrase([clean_inline(t) for t in mine])
        heading = shared or short_title(mine[0])
        root, sep, _part = p.heading.partition(": ")
        parents = {q.heading.strip().casefold() for q in proposals if q is not p}
        if sep and root.strip().casefold() in keep | parents:  # "Parent: new part"
            part = shared or part_title(mine[0])
            heading = f"{root}: {part}" if part.casefold() != root.casefold() else root
        if heading.casefold() in taken:
            continue
        p.rationale = (
            f"{p.rationale} Renamed from “{p.heading}”, named after pages it no longer "
            "cites, after the pages it cites now."
        ).strip()
        taken.add(heading.casefold())
        p.heading = heading
