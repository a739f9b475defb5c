"""Structured report state: a report as a title, sections and a numbered reference list.

A report is a title, an ordered list of sections (each a heading, a level and a
Markdown body carrying ``[n]`` citation markers) and a numbered reference list.

``core.domain.report_render.render_markdown`` writes it as Markdown in a canonical form and
``core.domain.report_parse.parse_markdown`` reads a Markdown report written by anyone (an
analyst's existing report, an export from another tool) into the same structure. For a
report in canonical form (bodies cite with ``[n]`` markers rather than inline links),
``render(parse(render(doc)))`` is byte-for-byte ``render(doc)``; for any other input the
first render is a fixed point: ``render(parse(render(parse(text)))) == render(parse(text))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.domain.citations import cited_markers, renumber_citations

# --------------------------------------------------------------------------- data


@dataclass
class RefEntry:
    """One entry of the References list."""

    marker: int  # the n of [n]
    url: str
    title: str
    fetched: str | None = None  # date as shown, 'YYYY-MM-DD'


@dataclass
class SectionDoc:
    """One section: a heading and its Markdown body.

    ``heading`` is '' and ``level`` is 0 for the preamble (text before the first
    heading). ``body`` has no leading or trailing blank lines.
    """

    key: str  # stable identifier (slug); not rendered
    heading: str
    level: int  # 0 (preamble) or 1..6
    body: str

    @property
    def markers(self) -> list[int]:
        """Cited markers in order of first appearance, without duplicates."""
        return cited_markers(self.body)


@dataclass
class ReportDoc:
    title: str
    sections: list[SectionDoc] = field(default_factory=list)
    references: list[RefEntry] = field(default_factory=list)  # sorted by marker

    def outline(self) -> list[tuple[int, str]]:
        """(level, heading) of the sections with a visible heading (level >= 1)."""
        return [(s.level, s.heading) for s in self.sections if s.level >= 1]


# --------------------------------------------------------------------------- keys


def _slugify(text: str) -> str:
    slug = re.sub(r"[\W_]+", "-", text.casefold()).strip("-")
    return slug[:80].rstrip("-")


def make_section_keys(headings: list[str]) -> list[str]:
    """Slugs of the headings, made unique with -2, -3 ... suffixes; '' becomes 'preamble'.

    A heading with no letters or digits gets the key 'section'.
    """
    used: set[str] = set()
    next_suffix: dict[str, int] = {}
    keys: list[str] = []
    for heading in headings:
        base = "preamble" if not heading.strip() else (_slugify(heading) or "section")
        key = base
        if key in used:
            n = next_suffix.get(base, 2)
            while f"{base}-{n}" in used:
                n += 1
            key = f"{base}-{n}"
            next_suffix[base] = n + 1
        used.add(key)
        keys.append(key)
    return keys


# --------------------------------------------------------------------------- markers
# a section's citations are read and renumbered by the one citation grammar, core.domain.citations


def reading_numbers(doc: ReportDoc) -> dict[int, int]:
    """Stored marker → the number a reader sees: 1, 2, 3 … in order of first citation
    through the sections, then the references no section cites, in marker order. Markers
    stay stable per source in the database (an update never renumbers them); a reader of
    one version gets consecutive numbers in reading order."""
    order: dict[int, None] = {}
    for section in doc.sections:
        for marker in section.markers:
            order.setdefault(marker, None)
    known = {r.marker for r in doc.references}
    cited = [m for m in order if m in known] if known else list(order)
    rest = sorted(known - set(cited))
    return {m: n for n, m in enumerate([*cited, *rest], start=1)}


def renumbered(doc: ReportDoc) -> tuple[ReportDoc, dict[int, int]]:
    """``doc`` with its citations and References numbered for reading (see
    :func:`reading_numbers`: bodies and list together), and the mapping used."""
    numbers = reading_numbers(doc)
    if all(k == v for k, v in numbers.items()):
        return doc, numbers
    sections = [
        SectionDoc(s.key, s.heading, s.level, renumber_citations(s.body, numbers))
        for s in doc.sections
    ]
    refs = sorted(
        (
            RefEntry(numbers.get(r.marker, r.marker), r.url, r.title, r.fetched)
            for r in doc.references
        ),
        key=lambda r: r.marker,
    )
    return ReportDoc(doc.title, sections, refs), numbers
