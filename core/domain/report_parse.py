"""Parsing a Markdown report written by anyone (an analyst's existing report, an export
from another tool) into a ``ReportDoc``; see ``parse_markdown`` for the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from core.domain.headers import front_matter
from core.domain.link_citations import Citations, definition_citations
from core.domain.markdown_text import (
    MD,
    heading_text,
    is_blank,
    normalize_newlines,
    one_line,
    strip_blank_edges,
)
from core.domain.reference_entries import parse_entry_text, read_entries
from core.domain.report_state import RefEntry, ReportDoc, SectionDoc, make_section_keys
from core.domain.untrusted import strip_bidi
from core.errors import EvergreenError

EMPTY_MESSAGE = "The Markdown file is empty: nothing to import."

#: Headings (compared case-insensitively) that mark a final section as the reference list.
REFERENCE_HEADINGS = frozenset(
    {"references", "sources", "bibliography", "works cited", "notes and sources"}
)


# --------------------------------------------------------------------------- reference entries


def _parse_reference_list(lines: list[str]) -> list[RefEntry] | None:
    """Entries of a References section (read by :func:`core.domain.reference_entries.read_entries`),
    numbered, or None when most lines are not entries."""
    entries = read_entries(lines)
    if entries is None:
        return None
    refs: dict[int, RefEntry] = {}
    pending: list[RefEntry] = []
    for number, explicit, text in entries:
        url, title, fetched = parse_entry_text(text)
        ref = RefEntry(marker=0, url=url, title=title, fetched=fetched)
        if number is not None and number >= 1 and number not in refs:
            ref.marker = number
            refs[number] = ref
        elif not explicit or number is None or number < 1:
            pending.append(ref)
        # an explicit duplicate [n] is dropped: the first entry for n wins
    top = max(refs, default=0)
    for ref in pending:
        top += 1
        ref.marker = top
        refs[top] = ref
    return [refs[k] for k in sorted(refs)]


def _is_reference_heading(heading: str) -> bool:
    name = re.sub(r"[*_`]", "", heading)
    name = re.sub(r"^\s*(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.)\s+", "", name, flags=re.I)
    return one_line(name).rstrip(":").strip().casefold() in REFERENCE_HEADINGS


# --------------------------------------------------------------------------- parse


def _front_matter(lines: list[str]) -> tuple[str | None, int]:
    """(title or None, number of lines up to the end of the front matter) for a YAML
    block at the top (read by :func:`core.domain.headers.front_matter`); (None, 0) for none.

    A block with no field is not front matter. Its ``title`` is the YAML value, or, when
    the block is not valid YAML, the ``title:`` field as written."""
    start = next((i for i, line in enumerate(lines) if not is_blank(line)), 0)
    found = front_matter(lines, start)
    if found is None or not found.fields:
        return None, 0
    title: object = found.data.get("title") if found.error is None else None
    if found.error is not None:
        title = next((f.value.strip("\"'") for f in found.fields if f.label == "title"), None)
    if not isinstance(title, str | int | float) or isinstance(title, bool):
        title = None
    return (heading_text(str(title)) or None) if title is not None else None, found.end + 1


@dataclass
class _RawSection:
    heading: str
    level: int
    start: int  # first body line
    end: int  # one past the last body line


def parse_markdown(text: str, *, default_title: str = "Untitled report") -> ReportDoc:
    """Parse a Markdown report written by anyone into a ``ReportDoc``.

    Rules:

    * Structure comes from markdown-it's CommonMark block parse, so '#' lines inside
      code blocks, list items or block quotes are not headings. ATX and setext
      headings are both accepted (rendering always writes ATX).
    * A leading YAML front matter block (``---`` ... ``---``) is dropped; its
      ``title:`` is the title when the document does not start with a level-1
      heading.
    * The first heading is the title when it is level 1 and nothing but blank lines
      (or front matter) precedes it; otherwise the title is the front matter title or
      ``default_title``.
    * Text between the title and the first other heading is the preamble section
      (heading '', level 0), omitted when empty.
    * A document with no heading at all becomes one level-2 section headed 'Report'
      holding the whole text, so that it has a visible outline.
    * A final section headed References / Sources / Bibliography / Works cited / Notes
      and sources (case-insensitive, optional numbering or trailing colon) is the
      reference list when more than half of its non-blank lines are entries
      (``[1] ...``, ``1. ...``, ``- [1] ...``, ``[1]: url "Title"``, or a bullet with a
      URL; indented lines continue an entry); lines that are not entries are dropped.
      Otherwise it stays a normal section.
    * Top-level link reference definitions with a numeric label (``[3]: url "T"``)
      anywhere become reference 3 (unless the list already has 3) and are removed
      from the body; other definitions stay in the body and serve reference links.
    * Inline links to http(s) URLs ``[text](url)`` and reference links
      ``[text][label]`` / ``[text][]`` / ``[label]`` whose definition is an http(s) URL
      become ``text [n]`` (or just ``[n]`` when the text is empty or a number); n is
      the marker of the first reference with the same URL, else max+1 with the link
      text as title. ``[text][3]`` becomes ``text [3]`` when reference 3 exists.
      Images, code and raw HTML are left alone; bare ``[n]`` markers are kept as they
      are (no reference is invented for them).
    * Bodies are the exact lines between headings, minus the blank lines at either
      end and numeric definitions. Control characters are removed from the title and
      headings. Newlines are normalized to ``\\n`` and a leading BOM is dropped; NUL
      and bidi override characters are removed everywhere.

    Raises ``EvergreenError`` for empty or whitespace-only text.
    """
    lines, fm_title = _clean_lines(text)
    if all(is_blank(line) for line in lines):
        if fm_title is None:
            raise EvergreenError(EMPTY_MESSAGE)
        return ReportDoc(title=fm_title, sections=[], references=[])
    covered, opaque, headings = _blocks(lines)
    title, raw = _outline(lines, headings)
    if title is None:
        title = fm_title or heading_text(default_title)
    references = _take_reference_list(lines, raw)
    limit = raw[-1].end if raw else 0
    citations, removed = definition_citations(lines[:limit], covered, references, len(lines))
    sections = _section_bodies(lines, raw, covered, opaque, citations, removed)
    return _report_doc(title, sections, citations)


def _clean_lines(text: str) -> tuple[list[str], str | None]:
    """The text's lines, cleaned, with its front matter blanked out, and the front
    matter's title (None without one). Raises ``EvergreenError`` for an empty text."""
    if not text or not text.strip():
        raise EvergreenError(EMPTY_MESSAGE)
    # NUL (which PostgreSQL text refuses) and bidi overrides (which make text read other
    # than it is) never enter a report
    text = strip_bidi(normalize_newlines(text.removeprefix("\ufeff")).replace("\x00", ""))
    lines = text.split("\n")
    fm_title, fm_lines = _front_matter(lines)
    for i in range(fm_lines):
        lines[i] = ""
    return lines, fm_title


def _take_reference_list(lines: list[str], raw: list[_RawSection]) -> list[RefEntry]:
    """The reference list, when the last raw section is one (it then leaves ``raw``)."""
    references: list[RefEntry] = []
    last = raw[-1]
    if last.level >= 1 and _is_reference_heading(last.heading):
        parsed = _parse_reference_list(lines[last.start : last.end])
        if parsed is not None:
            references = parsed
            raw.pop()
    return references


def _section_bodies(
    lines: list[str],
    raw: list[_RawSection],
    covered: bytearray,
    opaque: bytearray,
    citations: Citations,
    removed: bytearray,
) -> list[tuple[str, int, str]]:
    """(heading, level, body) of each section: its lines without the removed definitions,
    links turned into markers outside code and raw HTML, blank edges stripped; an empty
    preamble is left out."""
    sections: list[tuple[str, int, str]] = []
    for sec in raw:
        idxs = [i for i in range(sec.start, sec.end) if not removed[i]]
        body_lines = [lines[i] for i in idxs]
        skip = [bool(opaque[i]) or not covered[i] for i in idxs]
        body_lines = strip_blank_edges(citations.convert(body_lines, skip))
        if sec.level == 0 and not body_lines:
            continue
        sections.append((sec.heading, sec.level, "\n".join(body_lines)))
    return sections


def _report_doc(
    title: str, sections: list[tuple[str, int, str]], citations: Citations
) -> ReportDoc:
    """The parsed report: the sections keyed, the references in marker order."""
    keys = make_section_keys([h for h, _, _ in sections])
    return ReportDoc(
        title=title,
        sections=[
            SectionDoc(key=k, heading=h, level=lv, body=b)
            for k, (h, lv, b) in zip(keys, sections, strict=True)
        ],
        references=[citations.refs[m] for m in sorted(citations.refs)],
    )


def _blocks(lines: list[str]) -> tuple[bytearray, bytearray, list[tuple[int, int, int, str]]]:
    """markdown-it's block parse of the lines: which lines belong to a top-level block,
    which are code or raw HTML (never rewritten), and the top-level headings
    (start, end, level, text)."""
    n = len(lines)
    tokens: list[Token] = MD.parse("\n".join(lines), {})
    covered = bytearray(n)  # line belongs to some top-level block
    opaque = bytearray(n)  # code or raw HTML: never rewritten
    headings: list[tuple[int, int, int, str]] = []  # (start, end, level, text)
    for idx, tok in enumerate(tokens):
        if tok.map is None:
            continue
        a, b = tok.map
        if tok.level == 0:
            covered[a:b] = b"\x01" * (b - a)
            if tok.type == "heading_open":
                headings.append((a, b, int(tok.tag[1]), heading_text(tokens[idx + 1].content)))
        if tok.type in ("fence", "code_block", "html_block"):
            opaque[a:b] = b"\x01" * (b - a)
    return covered, opaque, headings


def _outline(
    lines: list[str], headings: list[tuple[int, int, int, str]]
) -> tuple[str | None, list[_RawSection]]:
    """The title (a level-1 first heading with nothing before it) and the raw sections:
    the preamble, then one per heading — or one 'Report' section for a text without any."""
    n = len(lines)
    title: str | None = None
    body_start = 0
    if headings and headings[0][2] == 1 and all(is_blank(ln) for ln in lines[: headings[0][0]]):
        title, body_start = headings[0][3], headings[0][1]
        headings = headings[1:]
    raw: list[_RawSection] = []
    if title is None and not headings:
        raw.append(_RawSection("Report", 2, 0, n))
    else:
        raw.append(_RawSection("", 0, body_start, headings[0][0] if headings else n))
        for k, (_, end, level, heading) in enumerate(headings):
            nxt = headings[k + 1][0] if k + 1 < len(headings) else n
            raw.append(_RawSection(heading, level, end, nxt))
    return title, raw
