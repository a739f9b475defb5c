"""What an update takes out of section text: sentences of sources it drops or trims,
sentences over a section's word budget (:func:`drop_markers`, :func:`keep_fact_lines`,
:func:`fit_words`), and repeated facts (:func:`merge_repeats`). Which sources go is
decided before (``core.domain.source_plan``).

Text edits are structural: prose paragraphs are split into cited sentences, list items
and table rows are one unit each, code is kept verbatim. A sentence citing several
sources loses only the dropped citations; it goes when none is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from rapidfuzz import fuzz

from core.domain.citations import (
    cited_markers,
    find_citations,
    format_citation,
    rewrite_citations,
    strip_citations,
)
from core.domain.sentences import claim_units, split_cited_sentences
from core.domain.source_plan import INCUMBENT_BONUS
from core.domain.text import FENCE, figures, terms

REPEAT_RATIO = 92  # rapidfuzz ratio at which two sentences state the same thing
KEEP_PROSE = 1  # sentences of prose a source keeps before any source goes whole
RESTATE_MIN_TERMS = 5  # content words a sentence needs before it can be found a restatement
_NEGATION = re.compile(r"\b(?:not|no|never|none|nor|cannot|without)\b|n't\b")
_UNIT_LINE = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}[.)]\s|\|)")


def _units(body: str) -> list[tuple[str, list[str]]]:
    """The body as blocks: ("code", [text]), ("lines", [list items / rows]) or
    ("prose", [sentences]); blocks are separated by blank lines."""
    blocks: list[tuple[str, list[str]]] = []
    fenced = False
    for block in body.split("\n\n"):
        lines = block.split("\n")
        opens = sum(1 for line in lines if FENCE.match(line)) % 2 == 1
        if fenced or opens or block.startswith("    ") or any(FENCE.match(x) for x in lines):
            blocks.append(("code", [block]))
            fenced = fenced != opens
            continue
        if all(_UNIT_LINE.match(line) or line.startswith("  ") for line in lines if line):
            blocks.append(("lines", lines))
        elif block.lstrip().startswith("#"):
            blocks.append(("code", [block]))
        else:
            blocks.append(("prose", claim_units(split_cited_sentences(block))))
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


def keep_fact_lines(
    body: str, markers: Iterable[int], lines: Mapping[int, str] | None = None
) -> str:
    """``body`` with the units citing only ``markers`` reduced to their fact lines (a
    superseded design keeps the line that says it was superseded, nothing more). A
    marker with no fact line in ``body`` gets ``lines[m]`` (what its page declares now,
    uncited), if given, in place of its first unit: a writer's "Status: Final [14]." or
    a sentence of prose would otherwise take the page out of the report without a word
    on what became of it."""
    only = set(markers)
    facts = [u for u in _cited_units(body) if is_fact_line(u)]
    stated = {m for u in facts for m in cited_markers(u)}
    owed = {m: line for m, line in (lines or {}).items() if m in only and m not in stated}

    def edit(unit: str) -> str | None:
        cited = set(cited_markers(unit))
        if cited and cited <= only and not is_fact_line(unit):
            # each page the unit cites that has no status line yet gets its own: "… [24, 42]."
            # trimmed whole took two superseded metadata PEPs out of a report
            mine = [m for m in cited_markers(unit) if m in owed]
            return " ".join(f"{owed.pop(m).rstrip('.')} [{m}]." for m in mine) or None
        return unit

    return edit_units(body, edit)


def _cited_units(body: str) -> list[str]:
    """The cited units of ``body`` (sentences, list items, table rows)."""
    units: list[str] = []

    def collect(unit: str) -> str:
        units.append(unit)
        return unit

    edit_units(body, collect)
    return units


def words(body: str) -> int:
    return len(strip_citations(body).split())


def fit_words(
    body: str,
    scores: Mapping[int, float],
    limit: int,
    protected: Iterable[int] = (),
    incumbents: Iterable[int] = (),
) -> tuple[str, list[int]]:
    """``body`` cut to at most ``limit`` words; the markers that lost sentences.

    Breadth before depth: first each source, least relevant first (``scores``: marker →
    relevance), loses its later sentences down to KEEP_PROSE of prose and its fact line;
    only when every source is that short do the least relevant sources go whole, prose
    before fact lines. A section over its words then still names each page the budget
    of sources kept, and the budget of sources decides what the report cites: cutting
    whole sources first, the benches' final reports held fewer key sources (PEP 0.524,
    Swift 0.734 against 0.551 and 0.752; ``BENCHMARKS.md``). Sentences of unscored or
    ``protected`` markers (the news) are never cut; ``incumbents`` (already cited) count
    INCUMBENT_BONUS more."""
    if limit <= 0 or words(body) <= limit:
        return body, []
    cut: list[int] = []
    keep = set(protected)
    victims = {m for m in cited_markers(body) if m in scores and m not in keep}
    held = set(incumbents)

    def worth(m: int) -> float:
        return scores[m] + (INCUMBENT_BONUS if m in held else 0.0)

    order = sorted(victims, key=lambda m: (worth(m), m))
    # depth first, the later sentences of each source; then whole sources, prose first
    passes = [[(m, False, KEEP_PROSE)] for m in order]
    passes += [[(m, False, 0), (m, True, 0)] for m in order]
    for steps in passes:
        for marker, facts_too, keep_prose in steps:
            body, lost = _trim(body, marker, limit, facts_too=facts_too, keep_prose=keep_prose)
            if lost and marker not in cut:
                cut.append(marker)
        if words(body) <= limit:
            break
    return body, cut


def _trim(
    body: str, marker: int, limit: int, *, facts_too: bool, keep_prose: int
) -> tuple[str, bool]:
    """``body`` with the last units citing only ``marker`` removed while it is over
    ``limit`` words and the source keeps more than ``keep_prose`` sentences of prose
    (fact lines too when ``facts_too``); and whether any went."""
    lost = False
    while words(body) > limit and (not keep_prose or _prose_units(body, marker) > keep_prose):
        victim = _last_unit_of(body, marker, facts_too)
        if victim is None:
            break
        body, lost = _remove_unit(body, victim), True
    return body, lost


def _prose_units(body: str, marker: int) -> int:
    """How many units of ``body`` cite only ``marker`` and are not its fact line."""
    return sum(
        1 for u in _cited_units(body) if cited_markers(u) == [marker] and not is_fact_line(u)
    )


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


def restates(later: str, earlier: str) -> bool:
    """Does ``later`` state nothing ``earlier`` does not, in other words ("The HGA Board
    approved the final rules on 26 March 2026" after "On 26 March the Halvard Grid
    Authority Board approved final capacity accreditation rules for storage")? All but
    one of its content words (at least RESTATE_MIN_TERMS) are ``earlier``'s, it gives a
    figure or date ``earlier`` gives and none that contradicts one (one's figures hold
    the other's), and both affirm or both deny."""
    mine, theirs = set(terms(later)), set(terms(earlier))
    if len(mine) < RESTATE_MIN_TERMS or len(mine - theirs) > 1:
        return False
    own, other = set(figures(later)), set(figures(earlier))
    if not own & other or not (own <= other or other <= own):
        return False
    return bool(_NEGATION.search(later)) == bool(_NEGATION.search(earlier))


def _said(unit: str) -> str:
    """What a unit states, to compare: its cited sentence (a lead-in joined to it aside),
    citations left out, case folded."""
    return strip_citations(split_cited_sentences(unit)[-1]).casefold()


def _naming_fact_lines(body: str) -> dict[str, int]:
    """Fact line (casefolded) → which of its occurrences in ``body`` (0 for the first)
    opens a paragraph of its page's own sentences, for the lines that open one. Kept
    there, the line names the page those sentences speak of: the sample's Tarnwick
    paragraph lost its line to a copy stated earlier beside another page, and went on
    "In April 2026 the developers signed …" with nothing naming whose developers."""
    seen: dict[str, int] = {}
    out: dict[str, int] = {}
    for kind, parts in _units(body):
        for j, unit in enumerate(parts):
            if not cited_markers(unit) or not is_fact_line(unit):
                continue
            line = unit.strip().casefold()
            mine = set(cited_markers(unit))
            opens = kind == "prose" and j == 0 and line not in out
            if opens and any(mine & set(cited_markers(u)) for u in parts[1:]):
                out[line] = seen.get(line, 0)
            seen[line] = seen.get(line, 0) + 1
    return out


def merge_repeats(bodies: Mapping[str, str]) -> tuple[dict[str, str], int]:
    """Sections (key → body) with each fact stated once: a prose sentence that repeats an
    earlier one (rapidfuzz ratio ≥ REPEAT_RATIO, citations aside, and the same figures:
    "the final 3.8 bugfix" and "the final 3.10 bugfix" are two facts however alike they
    read) is removed and its citations join the earlier sentence's; one that
    ``restates`` an earlier one in other words is removed (its source need not support
    the earlier wording, so its citations do not join). Returns the new bodies and how
    many merged."""
    kept: list[tuple[str, str]] = []  # (section key, normalised text) of sentences so far
    extra: dict[tuple[str, str], list[int]] = {}
    out: dict[str, str] = {}
    merged = 0
    for key, body in bodies.items():
        keep_at = _naming_fact_lines(body)
        count: dict[str, int] = {}

        def first_pass(
            unit: str,
            key: str = key,
            keep_at: dict[str, int] = keep_at,
            count: dict[str, int] = count,
        ) -> str | None:
            nonlocal merged
            if is_fact_line(unit):  # a page's status line: once per section, where it
                line = unit.strip().casefold()  # names its page's own paragraph if it does
                n = count[line] = count.get(line, -1) + 1
                if n != keep_at.get(line, 0):
                    merged += 1
                    return None
                return unit
            if unit.lstrip().startswith(("|", "-", "*", "+")):
                return unit
            text = _said(unit)
            if len(text) < 40:
                return unit
            for owner in kept:
                if fuzz.ratio(text, owner[1]) >= REPEAT_RATIO and _figures(text) == _figures(
                    owner[1]
                ):
                    extra.setdefault(owner, []).extend(cited_markers(unit))
                    merged += 1
                    return None
                if restates(text, owner[1]):  # its own source need not say it so: it goes
                    merged += 1
                    return None
            kept.append((key, text))
            return unit

        out[key] = edit_units(body, first_pass)
    if not extra:
        return out, merged
    for key, body in out.items():

        def second_pass(unit: str, key: str = key) -> str:
            add = extra.get((key, _said(unit)))
            if not add:
                return unit
            have = cited_markers(unit)
            return _recite(unit, have + [m for m in dict.fromkeys(add) if m not in have])

        out[key] = edit_units(body, second_pass)
    return out, merged
