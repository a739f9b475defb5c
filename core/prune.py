"""What an update takes out: sources below relevance, superseded designs, sources over
the report's budget, sentences over a section's word budget, and repeated facts.

Reports that only grow stop answering the question: after a few years they cite three
times as many sources, most of them no longer what the question is about. An update
therefore decides which sources the report keeps (:func:`choose_sources`) *before* any
writer call — a new page that would not make the cut is never sent to a writer — and
then edits section text (:func:`drop_markers`, :func:`fit_words`, :func:`merge_repeats`).
Every cut carries a plain reason, and a removal is proposed and reviewed like any other
change.

Text edits are structural: prose paragraphs are split into cited sentences, list items
and table rows are one unit each, code is kept verbatim. A sentence citing several
sources loses only the dropped citations; it goes when none is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from core.citations import (
    cited_markers,
    find_citations,
    format_citation,
    rewrite_citations,
    strip_citations,
)
from core.keyfacts import fact_changes, read_key_facts
from core.sentences import split_cited_sentences
from core.text import figures

#: a source already cited keeps its place against a new page unless the new one scores
#: this much better (no churn between near-equal pages)
INCUMBENT_BONUS = 0.03
FELL_BY = 0.1  # how much a rewritten page's relevance must drop for it to have "fallen"
REPEAT_RATIO = 92  # rapidfuzz ratio at which two sentences state the same thing
#: declared statuses of a design that is no longer the current one
_RETIRED = re.compile(r"\b(withdrawn|superseded|replaced|obsolete|abandoned|retired)\b", re.I)
#: fields that name what replaced a page
_REPLACED_BY = re.compile(r"(superseded|replaced|obsoleted)-by")
_FENCE = re.compile(r"^\s*(```|~~~)")
_UNIT_LINE = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}[.)]\s|\|)")


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
            cuts[m] = f"less relevant than the {budget} sources the report's budget keeps"
        else:
            kept.append(m)
    return kept, cuts


def _units(body: str) -> list[tuple[str, list[str]]]:
    """The body as blocks: ("code", [text]), ("lines", [list items / rows]) or
    ("prose", [sentences]); blocks are separated by blank lines."""
    blocks: list[tuple[str, list[str]]] = []
    fenced = False
    for block in body.split("\n\n"):
        lines = block.split("\n")
        opens = sum(1 for line in lines if _FENCE.match(line)) % 2 == 1
        if fenced or opens or block.startswith("    ") or any(_FENCE.match(x) for x in lines):
            blocks.append(("code", [block]))
            fenced = fenced != opens
            continue
        if all(_UNIT_LINE.match(line) or line.startswith("  ") for line in lines if line):
            blocks.append(("lines", lines))
        elif block.lstrip().startswith("#"):
            blocks.append(("code", [block]))
        else:
            blocks.append(("prose", split_cited_sentences(block)))
    return blocks


def _join(blocks: list[tuple[str, list[str]]]) -> str:
    return "\n\n".join(
        (" " if kind == "prose" else "\n").join(parts) for kind, parts in blocks if parts
    )


def edit_units(body: str, edit: Callable[[str], str | None]) -> str:
    """``body`` with each cited sentence, list item or table row passed through ``edit``
    (None removes it); uncited text and code are kept as they are. A table left with no
    cited row goes whole (its header alone says nothing)."""
    blocks = _units(body)
    for i, (kind, parts) in enumerate(blocks):
        if kind == "code":
            continue
        new: list[str] = []
        for part in parts:
            if not cited_markers(part):
                new.append(part)
                continue
            edited = edit(part)
            if edited is not None:
                new.append(edited)
        is_table = kind == "lines" and parts[0].lstrip().startswith("|")
        cited = any(cited_markers(p) for p in parts)
        if is_table and cited and not any(cited_markers(p) for p in new):
            new = []
        blocks[i] = (kind, new)
    return _join(blocks)


def _recite(unit: str, markers: list[int]) -> str:
    """``unit`` with its last citation group replaced by ``markers`` (others removed)."""
    last = find_citations(unit)[-1]
    return rewrite_citations(unit, lambda c: format_citation(markers) if c == last else "")


def drop_markers(body: str, gone: Iterable[int]) -> str:
    """``body`` without the citations of ``gone``: a unit citing only them is removed,
    one citing others too keeps those."""
    out = set(gone)
    if not out:
        return body

    def edit(unit: str) -> str | None:
        markers = cited_markers(unit)
        left = [m for m in markers if m not in out]
        if not left:
            return None
        return unit if left == markers else _recite(unit, left)

    return edit_units(body, edit)


def is_fact_line(unit: str) -> bool:
    """A summary of a page's declared fields ("Title — Status: Final; Type: …")."""
    head, sep, tail = strip_citations(unit).partition(" — ")
    return bool(sep) and ":" in tail


def keep_fact_lines(body: str, markers: Iterable[int]) -> str:
    """``body`` with the units citing only ``markers`` reduced to their fact lines (a
    superseded design keeps the line that says it was superseded, nothing more)."""
    only = set(markers)

    def edit(unit: str) -> str | None:
        cited = set(cited_markers(unit))
        if cited and cited <= only and not is_fact_line(unit):
            return None
        return unit

    return edit_units(body, edit)


def words(body: str) -> int:
    return len(strip_citations(body).split())


def fit_words(
    body: str,
    scores: Mapping[int, float],
    limit: int,
    protected: Iterable[int] = (),
    incumbents: Iterable[int] = (),
) -> tuple[str, list[int]]:
    """``body`` cut to at most ``limit`` words by dropping the sentences of its least
    relevant sources (``scores``: marker → relevance), prose before fact lines; the
    markers that lost sentences. Sentences of unscored or ``protected`` markers (the
    news) are never cut; ``incumbents`` (already cited) count INCUMBENT_BONUS more."""
    if limit <= 0 or words(body) <= limit:
        return body, []
    cut: list[int] = []
    keep = set(protected)
    victims = {m for m in cited_markers(body) if m in scores and m not in keep}
    held = set(incumbents)

    def worth(m: int) -> float:
        return scores[m] + (INCUMBENT_BONUS if m in held else 0.0)

    for marker in sorted(victims, key=lambda m: (worth(m), m)):
        for facts_too in (False, True):
            while words(body) > limit:
                victim = _last_unit_of(body, marker, facts_too)
                if victim is None:
                    break
                body = _remove_unit(body, victim)
                if marker not in cut:
                    cut.append(marker)
        if words(body) <= limit:
            break
    return body, cut


def _last_unit_of(body: str, marker: int, facts_too: bool) -> str | None:
    found: str | None = None

    def look(unit: str) -> str:
        nonlocal found
        if cited_markers(unit) == [marker] and (facts_too or not is_fact_line(unit)):
            found = unit
        return unit

    edit_units(body, look)
    return found


def _remove_unit(body: str, victim: str) -> str:
    """``body`` without the last unit equal to ``victim``."""
    count = 0

    def tally(unit: str) -> str:
        nonlocal count
        count += unit == victim
        return unit

    edit_units(body, tally)
    seen = 0

    def drop_last(unit: str) -> str | None:
        nonlocal seen
        if unit == victim:
            seen += 1
            if seen == count:
                return None
        return unit

    return edit_units(body, drop_last) if count else body


def _figures(text: str) -> list[str]:
    return sorted(figures(text))


def merge_repeats(bodies: Mapping[str, str]) -> tuple[dict[str, str], int]:
    """Sections (key → body) with each fact stated once: a prose sentence that repeats an
    earlier one (rapidfuzz ratio ≥ REPEAT_RATIO, citations aside, and the same figures:
    "the final 3.8 bugfix" and "the final 3.10 bugfix" are two facts however alike they
    read) is removed and its citations join the earlier sentence's. Returns the new bodies
    and how many merged."""
    kept: list[tuple[str, str]] = []  # (section key, normalised text) of sentences so far
    extra: dict[tuple[str, str], list[int]] = {}
    facts_seen: set[tuple[str, str]] = set()
    out: dict[str, str] = {}
    merged = 0
    for key, body in bodies.items():

        def first_pass(unit: str, key: str = key) -> str | None:
            nonlocal merged
            if is_fact_line(unit):  # a page's status line: once per section
                line = (key, unit.strip().casefold())
                if line in facts_seen:
                    merged += 1
                    return None
                facts_seen.add(line)
                return unit
            if unit.lstrip().startswith(("|", "-", "*", "+")):
                return unit
            text = strip_citations(unit).casefold()
            if len(text) < 40:
                return unit
            for owner in kept:
                if fuzz.ratio(text, owner[1]) >= REPEAT_RATIO and _figures(text) == _figures(
                    owner[1]
                ):
                    extra.setdefault(owner, []).extend(cited_markers(unit))
                    merged += 1
                    return None
            kept.append((key, text))
            return unit

        out[key] = edit_units(body, first_pass)
    if not extra:
        return out, merged
    for key, body in out.items():

        def second_pass(unit: str, key: str = key) -> str:
            add = extra.get((key, strip_citations(unit).casefold()))
            if not add:
                return unit
            have = cited_markers(unit)
            return _recite(unit, have + [m for m in dict.fromkeys(add) if m not in have])

        out[key] = edit_units(body, second_pass)
    return out, merged


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
    from core.relevance import RELEVANCE_MIN, Relevance

    changed = {m: page for m, page in changed.items() if m in cited}
    over = budget.sources > 0 and len(cited) > budget.sources
    too_long = budget.words > 0 and any(n > budget.words for n in section_words)
    if not changed and not new and not over and not too_long:
        return SourcePlan({}, {}, set(), {})
    pages = {**cited, **new}
    relevance = Relevance(question, collection)
    keyed = {str(m): pages[m] for m in pages}
    semantic = relevance.page_scores(keyed)
    hybrid = relevance.hybrid_scores(keyed, semantic)
    scores = {m: semantic[str(m)] for m in pages}  # the bar: the semantic scale
    ranks = {m: hybrid[str(m)] for m in pages}  # what to keep: words and meaning
    superseded = {m: by for m in [*changed, *new] if (by := superseded_by(pages[m][1])) is not None}
    before = relevance.page_scores({str(m): changed[m] for m in changed})
    fell = {
        m for m in changed if scores[m] < RELEVANCE_MIN and before[str(m)] - scores[m] >= FELL_BY
    }
    candidates = {m: s for m, s in ranks.items() if not (m in new and m in superseded)}
    news = {
        m
        for m in changed
        if fact_changes(read_key_facts(changed[m][1]), read_key_facts(cited[m][1]))
    }
    _kept, cuts = choose_sources(
        {m: s for m, s in candidates.items() if m not in fell},
        cited,
        budget.sources,
        0.0,
        protected=news,
    )
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
