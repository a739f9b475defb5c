"""Which sources an update keeps: sources below relevance, superseded designs and
sources over the report's budget go (:func:`plan_sources`, :func:`choose_sources`).

Reports that only grow stop answering the question: after a few years they cite three
times as many sources, most of them no longer what the question is about. An update
therefore decides which sources the report keeps *before* any writer call — a new page
that would not make the cut is never sent to a writer — and then edits section text
(``core.domain.prune``). Every cut carries a plain reason, and a removal is proposed and
reviewed like any other change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from core.domain.keyfacts import fact_changes, read_key_facts
from core.domain.relevance import RELEVANCE_MIN, Relevance

#: a source already cited keeps its place against a new page unless the new one scores
#: this much better (no churn between near-equal pages)
INCUMBENT_BONUS = 0.03
FELL_BY = 0.1  # how much a rewritten page's relevance must drop for it to have "fallen"
SPLIT_MIN = 2  # new pages a full section must receive for them to open a section of their own
YIELD_BY = 0.02  # how much less relevant than those new pages a section must be to give way
_OVER_BUDGET = "less relevant than the {n} sources the report's budget keeps"
#: declared statuses of a design that is no longer the current one
_RETIRED = re.compile(r"\b(withdrawn|superseded|replaced|obsolete|abandoned|retired)\b", re.I)
#: fields that name what replaced a page
_REPLACED_BY = re.compile(r"(superseded|replaced|obsoleted)-by")


@dataclass(frozen=True)
class Budget:
    """How much a report may hold: ``sources`` cited in all, ``words`` per section
    (0 or less: no limit)."""

    sources: int = 0
    words: int = 0


def budget_of(settings: Mapping[str, object]) -> Budget:
    """A report's budget from its settings (``max_sources``, ``max_section_words``)."""

    def number(key: str) -> int:
        value = settings.get(key) or 0
        return int(value) if isinstance(value, int | float | str) else 0

    return Budget(number("max_sources"), number("max_section_words"))


def sections_to_split(
    sections: Mapping[str, tuple[int, int]], incoming: Mapping[str, int], budget: Budget, free: int
) -> list[str]:
    """The sections whose new pages open a section of their own, most new pages first,
    at most ``free`` (the sections the report may still add). ``sections``: key → (its
    words, the sources it cites); ``incoming``: key → the new pages placed there.

    A section splits when it receives at least SPLIT_MIN new pages and they would take it
    over its word budget, at the words per source it already spends. Squeezed into one
    section, new pages are cut again by the budget — the least relevant sentences are
    those of the newest, least cited pages: a typing report created in 2016 was sent
    eight typing pages for its one typing section in 2017 and kept two of them, while
    its off-topic sections stayed. Several new pages on a section's subject are a part
    of the question of their own, so they get a section. Two are enough: in 2023 and
    2024 that report was sent two typing pages a year and cut three of the four (PEP and
    Swift benches: ``BENCHMARKS.md``); one new page still goes into the section."""
    if budget.words <= 0 or free <= 0:
        return []

    def overflows(key: str) -> bool:
        words, sources = sections.get(key, (0, 0))
        return words + incoming[key] * words / max(1, sources) > budget.words

    full = [key for key, n in incoming.items() if n >= SPLIT_MIN and overflows(key)]
    return sorted(full, key=lambda key: (-incoming[key], key))[:free]


def section_to_yield(
    section_markers: Mapping[str, Iterable[int]],
    ranks: Mapping[int, float],
    incoming: Iterable[int],
    protected: Iterable[int] = (),
) -> str | None:
    """The section that gives way to a new one when the report has no room for another
    (its ``max_sections``): the one whose sources are least relevant (mean of ``ranks``),
    when they are YIELD_BY less relevant than the ``incoming`` pages that would make the
    new section — and, when it cites more sources than come in, every one of them is.
    Only a section whose sources no other section cites, none of them ``protected`` (the
    news), can go whole; None when none qualifies.

    A first report takes what its search found when little was written about the
    question yet, and keeps those sections for good: a typing report created in 2016
    carried "Python 3.3 Release Schedule" to 2025 while its typing pages were cut. On
    their mean alone, a Swift concurrency section of nine proposals ("Actors",
    "Structured concurrency" and "Async/await" beside weaker pages) gave way to four new
    pages, 0.02 more relevant on theirs: the report lost its core for a side topic
    (``BENCHMARKS.md``)."""
    ranks_in = [ranks[m] for m in incoming if m in ranks]
    if not ranks_in:
        return None
    owners: dict[int, set[str]] = {}
    for key, markers in section_markers.items():
        for m in markers:
            owners.setdefault(m, set()).add(key)
    held = set(protected)
    bar = sum(ranks_in) / len(ranks_in) - YIELD_BY
    weakest: tuple[float, str] | None = None
    for key, markers in section_markers.items():
        mine = set(markers)
        if not mine or mine & held or any(owners[m] != {key} or m not in ranks for m in mine):
            continue
        mean = sum(ranks[m] for m in mine) / len(mine)
        if mean >= bar:
            continue
        if len(mine) > len(ranks_in) and max(ranks[m] for m in mine) >= bar:
            continue  # more sources go than come, and not all of them are less relevant
        if weakest is None or (mean, key) < weakest:
            weakest = (mean, key)
    return weakest[1] if weakest is not None else None


def superseded_by(content: str) -> str | None:
    """What replaced the page, when it declares itself retired (withdrawn, superseded …)
    *and* names its replacement (``Superseded-By: 8xx``); else None."""
    facts = read_key_facts(content)
    retired = any(f.kind == "status" and _RETIRED.search(f.value) for f in facts)
    if not retired:
        return None
    for f in facts:
        if _REPLACED_BY.search(f.key) and f.value.strip():
            return f.value.strip()
    return None


def choose_sources(
    scores: Mapping[int, float],
    incumbents: Iterable[int],
    budget: int,
    floor: float,
    protected: Iterable[int] = (),
) -> tuple[list[int], dict[int, str]]:
    """(markers kept, most relevant first; marker → why it goes) for the sources of
    ``scores`` (marker → relevance). Below ``floor`` a source goes; over ``budget`` the
    least relevant go, a source already cited counting INCUMBENT_BONUS more. A
    ``protected`` source (one whose declared status just changed: the news) is kept
    first, whatever its score."""
    held, news = set(incumbents), set(protected)
    cuts: dict[int, str] = {}
    ranked = sorted(
        scores,
        key=lambda m: (
            m not in news,
            -(scores[m] + (INCUMBENT_BONUS if m in held else 0.0)),
            m,
        ),
    )
    kept: list[int] = []
    for m in ranked:
        if scores[m] < floor and m not in news:
            cuts[m] = "no longer about the question (relevance below the report's bar)"
        elif budget > 0 and len(kept) >= budget:
            cuts[m] = _OVER_BUDGET.format(n=budget)
        else:
            kept.append(m)
    return kept, cuts


@dataclass
class SourcePlan:
    """What an update keeps: ``cuts`` (marker → why its sentences go), ``superseded``
    (marker → what replaced it: only its fact line stays), the new pages ``admitted``,
    and ``scores`` (marker → relevance; empty when nothing needed scoring)."""

    cuts: dict[int, str]
    superseded: dict[int, str]
    admitted: set[int]
    scores: dict[int, float]  # relevance used to rank what stays
    news: set[int] = field(default_factory=set)  # declared status just changed: never cut

    def reasons(self, markers: Iterable[int], titles: Mapping[int, str]) -> list[str]:
        """One plain line per source of ``markers`` that this plan cuts or trims."""
        out = []
        for m in dict.fromkeys(markers):
            title = titles.get(m) or f"source [{m}]"
            if m in self.cuts:
                out.append(f"Removed {title} [{m}]: {self.cuts[m]}.")
            elif m in self.superseded:
                out.append(
                    f"Trimmed {title} [{m}] to its status line: superseded by {self.superseded[m]}."
                )
        return out


def plan_sources(
    question: str,
    cited: Mapping[int, tuple[str, str]],
    changed: Mapping[int, tuple[str, str]],
    new: Mapping[int, tuple[str, str]],
    budget: Budget,
    section_words: Iterable[int] = (),
    collection: object = None,
) -> SourcePlan:
    """Decide which sources an update keeps. ``cited``: marker → (title, content now) of
    the sources the report cites (gone ones left out); ``changed``: marker → (title,
    content before) of those whose text changed; ``new``: marker → (title, content) of
    the pages discovery found; ``collection``: the search provider they come from
    (relevance is centred on it when it holds its whole collection).

    A cited source goes when its page *fell* below relevance — it was rewritten about
    something else: it scores below RELEVANCE_MIN now and FELL_BY less than before (a
    small static model's low score alone is not enough to drop what the report cites) —
    or when the budget keeps more relevant ones.

    Nothing is scored — and nothing cut — when no source changed, nothing is new and the
    report is within its budget: an unchanged report stays as it is, at no cost."""
    changed = {m: page for m, page in changed.items() if m in cited}
    if not _needs_plan(cited, changed, new, budget, section_words):
        return SourcePlan({}, {}, set(), {})
    pages = {**cited, **new}
    relevance = Relevance(question, collection)
    scores, ranks = _scores(relevance, pages)
    superseded = {m: by for m in [*changed, *new] if (by := superseded_by(pages[m][1])) is not None}
    fell = _fallen(relevance, changed, scores)
    candidates = {m: s for m, s in ranks.items() if not (m in new and m in superseded)}
    news = _news(cited, changed)
    ranked = {m: s for m, s in candidates.items() if m not in fell}
    kept, cuts = choose_sources(ranked, cited, budget.sources, 0.0, protected=news)
    _name_what_outranks(cuts, [m for m in kept if m not in news], ranks, pages, cited)
    cuts.update({m: "rewritten about something else (no longer about the question)" for m in fell})
    new_below = {m for m in new if scores[m] < RELEVANCE_MIN}
    cuts.update({m: "not about the question" for m in new_below})
    admitted = {m for m in new if m in candidates and m not in cuts}
    return SourcePlan(
        {m: why for m, why in cuts.items() if m in cited},
        {m: by for m, by in superseded.items() if m in cited and m not in cuts},
        admitted,
        ranks,
        news,
    )


def _name_what_outranks(
    cuts: dict[int, str],
    kept: list[int],
    ranks: Mapping[int, float],
    pages: Mapping[int, tuple[str, str]],
    cited: Iterable[int],
) -> None:
    """Say, in each cut the budget made, which of the ``kept`` sources (those kept for
    their rank) it ranks below and by how much: the analyst can check it ("… the least
    of them, "Actors" [3], ranks 0.410 for the question, this one 0.380")."""
    held = set(cited)
    ranked = [m for m in kept if m in ranks]
    if not ranked:
        return
    least = min(ranked, key=lambda m: ranks[m] + (INCUMBENT_BONUS if m in held else 0.0))
    title = pages[least][0] or f"source [{least}]"
    for m, why in cuts.items():
        if why.startswith("less relevant than the "):
            cuts[m] = (
                f"{why}; the least of them, \u201c{title}\u201d [{least}], ranks "
                f"{ranks[least]:.3f} for the question, this one {ranks[m]:.3f}"
            )


def _needs_plan(
    cited: Mapping[int, tuple[str, str]],
    changed: Mapping[int, tuple[str, str]],
    new: Mapping[int, tuple[str, str]],
    budget: Budget,
    section_words: Iterable[int],
) -> bool:
    """Is there anything to decide: a changed source, a new page, or a report over its
    budget (of sources, or of words in some section)?"""
    over = budget.sources > 0 and len(cited) > budget.sources
    too_long = budget.words > 0 and any(n > budget.words for n in section_words)
    return bool(changed or new or over or too_long)


def _scores(
    relevance: Relevance, pages: Mapping[int, tuple[str, str]]
) -> tuple[dict[int, float], dict[int, float]]:
    """(marker → semantic score: the bar, marker → hybrid score: what to keep, by words
    and meaning) of ``pages``."""
    keyed = {str(m): pages[m] for m in pages}
    semantic = relevance.page_scores(keyed)
    hybrid = relevance.hybrid_scores(keyed, semantic)
    scores = {m: semantic[str(m)] for m in pages}  # the bar: the semantic scale
    ranks = {m: hybrid[str(m)] for m in pages}  # what to keep: words and meaning
    return scores, ranks


def _fallen(
    relevance: Relevance, changed: Mapping[int, tuple[str, str]], scores: Mapping[int, float]
) -> set[int]:
    """The changed sources rewritten about something else: below RELEVANCE_MIN now, and
    FELL_BY less than their text before scored."""
    before = relevance.page_scores({str(m): changed[m] for m in changed})
    return {
        m for m in changed if scores[m] < RELEVANCE_MIN and before[str(m)] - scores[m] >= FELL_BY
    }


def _news(cited: Mapping[int, tuple[str, str]], changed: Mapping[int, tuple[str, str]]) -> set[int]:
    """The changed sources whose declared key facts changed (the news: never cut)."""
    return {
        m
        for m in changed
        if fact_changes(read_key_facts(changed[m][1]), read_key_facts(cited[m][1]))
    }
