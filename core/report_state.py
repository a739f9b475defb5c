"""Structured report state: render a report to Markdown and parse any Markdown back.

A report is a title, an ordered list of sections (each a heading, a level and a
Markdown body carrying ``[n]`` citation markers) and a numbered reference list.

``render_markdown`` writes the canonical form::

    # {title}

    {preamble body, if any}

    ## {heading}

    {body}

    ## References

    [1] [{title}]({url}) — fetched {YYYY-MM-DD}

    [2] [{title}]({url})

Blocks are separated by one blank line and the text ends with a single newline.

``parse_markdown`` reads a Markdown report written by anyone (an analyst's
existing report, an export from another tool) into the same structure; see its
docstring for the rules. For a report in canonical form (bodies cite with
``[n]`` markers rather than inline links), ``render(parse(render(doc)))`` is
byte-for-byte ``render(doc)``; for any other input the first render is a fixed
point: ``render(parse(render(parse(text)))) == render(parse(text))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.citations import cited_markers, renumber_citations
from core.errors import EvergreenError
from core.headers import front_matter
from core.links import HTTP, LINK_TITLE, LINKISH, unangle, unescape_link_text
from core.reference_entries import parse_entry_text, read_entries
from core.untrusted import strip_bidi

__all__ = [
    "REFERENCE_HEADINGS",
    "VERSION_LINE",
    "RefEntry",
    "ReportDoc",
    "SectionDoc",
    "cited_markers",
    "escape_heading_lines",
    "make_section_keys",
    "parse_markdown",
    "render_markdown",
    "strip_version_line",
]

EMPTY_MESSAGE = "The Markdown file is empty: nothing to import."

#: Headings (compared case-insensitively) that mark a final section as the reference list.
REFERENCE_HEADINGS = frozenset(
    {"references", "sources", "bibliography", "works cited", "notes and sources"}
)

# Block-level parsing only: inline parsing is not needed (we work on raw lines) and is
# the expensive part on large documents.
_MD = MarkdownIt("commonmark").disable("inline")


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


# --------------------------------------------------------------------------- text helpers

# C0/C1 controls except \t and \n, and the invisible characters that can make a heading
# or title read differently from what it says (bidi overrides and isolates, ZWSP, LRM/RLM)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WS = re.compile(r"\s+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _heading_text(text: str) -> str:
    """One-line heading text that survives ``#`` rendering and parsing unchanged.

    Control characters are removed, newlines become spaces, the ends are stripped, and
    a trailing run of '#' that Markdown would read as a closing sequence is escaped.
    """
    text = _CONTROL.sub("", text).replace("\n", " ").strip()
    m = re.search(r"#+$", text)
    if m and (m.start() == 0 or text[m.start() - 1] in " \t"):
        text = text[: m.start()] + "\\" + text[m.start() :]
    return text


def _one_line(text: str) -> str:
    """Control characters removed, whitespace runs collapsed to one space, stripped."""
    return _WS.sub(" ", _CONTROL.sub("", text)).strip()


def _escape_link_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _format_url(url: str) -> str:
    if not re.search(r"[\s()<>]", url):
        return url
    if not re.search(r"[<>\n]", url):
        return f"<{url}>"
    return re.sub(r"[\s()<>]", lambda m: f"%{ord(m.group()):02X}", url)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and _is_blank(lines[start]):
        start += 1
    while end > start and _is_blank(lines[end - 1]):
        end -= 1
    return lines[start:end]


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


# --------------------------------------------------------------------------- block structure


def _mask_code_spans(text: str) -> str:
    """Replace inline code spans (backtick-delimited) with NULs of the same length."""
    if "`" not in text:
        return text
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    next_same: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1] - runs[k][0]
        next_same[k] = last.get(length)
        last[length] = k
    pieces: list[str] = []
    pos = k = 0
    while k < len(runs):
        close = next_same[k]
        if close is None:
            k += 1
            continue
        a, b = runs[k][0], runs[close][1]
        pieces.append(text[pos:a])
        pieces.append("\x00" * (b - a))
        pos, k = b, close + 1
    pieces.append(text[pos:])
    return "".join(pieces)


# --------------------------------------------------------------------------- markers
# a section's citations are read and renumbered by the one citation grammar,
# core.citations (``cited_markers`` is re-exported here for the report's readers)


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


# --------------------------------------------------------------------------- writer safety

_HEADING_CANDIDATE = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.M)
_OPENER_CANDIDATE = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|<)", re.M)


def _escape_at_indent(line: str) -> str:
    indent = len(line) - len(line.lstrip(" "))
    return line[:indent] + "\\" + line[indent:]


def escape_heading_lines(body: str) -> str:
    """Make body lines that would parse as (top-level) headings literal.

    An ATX heading line ``## x`` becomes ``\\## x``; a setext underline (``===`` or
    ``---`` under a paragraph line) becomes ``\\===`` / ``\\---``. Lines inside code
    blocks, list items and block quotes are left alone, since they do not start a
    section. Newlines are normalized to ``\\n``. Idempotent.
    """
    body = _normalize_newlines(body)
    if not _HEADING_CANDIDATE.search(body):
        return body
    lines = body.split("\n")
    for _ in range(len(lines) + 1):
        changed = False
        for tok in _MD.parse("\n".join(lines)):
            if tok.type != "heading_open" or tok.level != 0 or tok.map is None:
                continue
            idx = tok.map[0] if tok.markup.startswith("#") else tok.map[1] - 1
            lines[idx] = _escape_at_indent(lines[idx])
            changed = True
        if not changed:
            break
    return "\n".join(lines)


def _html_closer(content: str) -> str | None:
    head = content.lstrip().lower()
    m = re.match(r"<(script|pre|style|textarea)(?=[\s>]|$)", head)
    if m:
        return f"</{m.group(1)}>"
    for opener, closer in (("<!--", "-->"), ("<?", "?>"), ("<![cdata[", "]]>"), ("<!", ">")):
        if head.startswith(opener):
            return closer
    return None


def _close_open_blocks(body: str) -> str:
    """Close a fenced code block or raw HTML block left open at the end of ``body``.

    Left open, it would swallow every following heading of the rendered report.
    """
    if not _OPENER_CANDIDATE.search(body):
        return body
    for _ in range(8):
        sentinel = body.count("\n") + 2
        tokens = _MD.parse(body + "\n\n# x\n")
        if any(
            t.type == "heading_open" and t.level == 0 and t.map and t.map[0] == sentinel
            for t in tokens
        ):
            return body
        last = next((t for t in reversed(tokens) if t.level == 0 and t.map is not None), None)
        closer = None
        if last is not None and last.type == "fence":
            closer = last.markup
        elif last is not None and last.type == "html_block":
            closer = _html_closer(last.content)
        if not closer:
            return body
        body = f"{body}\n{closer}"
    return body


def _safe_body(body: str) -> str:
    lines = _strip_blank_edges(_normalize_newlines(body).split("\n"))
    if not lines:
        return ""
    return escape_heading_lines(_close_open_blocks("\n".join(lines)))


# --------------------------------------------------------------------------- render


def _render_reference(ref: RefEntry) -> str:
    url = ref.url.strip()
    title = _one_line(ref.title) or url
    if url:
        line = f"[{ref.marker}] [{_escape_link_text(title)}]({_format_url(url)})"
    else:
        line = f"[{ref.marker}] {title}".rstrip()
    if ref.fetched:
        m = _DATE.match(ref.fetched.strip())
        if m:
            line += f" — fetched {m.group()}"
    return line


#: The line an export writes under the title, generated from the version (see
#: ``core.export.version_line``): ``_Version 3 · as of 2026-07-15 · 36 claims, 0 stale_``.
VERSION_LINE = re.compile(r"^_Version \d{1,9} · as of \d{4}-\d{2}-\d{2}(?: · [0-9a-z ,]{1,120})?_$")


def strip_version_line(body: str) -> str:
    """``body`` without a leading version line (and the blank lines after it): what an
    exported file that was imported again carries at the top of its preamble."""
    lines = _normalize_newlines(body).split("\n")
    start = next((i for i, line in enumerate(lines) if not _is_blank(line)), None)
    if start is None or not VERSION_LINE.match(lines[start].strip()):
        return body
    return "\n".join(_strip_blank_edges(lines[start + 1 :]))


def render_markdown(doc: ReportDoc, *, version_line: str | None = None) -> str:
    """Render ``doc`` in the canonical form (see the module docstring).

    ``version_line`` (an export's ``_Version n · as of YYYY-MM-DD · …_``, matching
    ``VERSION_LINE``) is written right under the title; a version line already at the top
    of the preamble (an exported file imported again) is replaced, never repeated, so
    ``render(parse(render(doc, version_line=v)), version_line=v)`` is
    ``render(doc, version_line=v)``.

    Normalizations that keep the output parseable into the same structure: headings
    lose control characters and newlines (and a trailing '#' run is escaped); levels
    are clamped to 1..6 (a level-0 section renders its body only); bodies lose
    leading/trailing blank lines, get heading-like lines escaped
    (``escape_heading_lines``) and an unterminated code fence or HTML block closed;
    reference titles are put on one line (an empty title shows the URL) and
    ``fetched`` is shown only when it starts with a YYYY-MM-DD date.
    """
    title = _heading_text(doc.title)
    blocks = [f"# {title}" if title else "#"]
    if version_line is not None:
        if not VERSION_LINE.match(version_line):
            raise ValueError(f"Not a version line: {version_line!r}")
        blocks.append(version_line)
    for n, section in enumerate(doc.sections):
        text = section.body
        if version_line is not None and n == 0 and section.level == 0:
            text = strip_version_line(text)
        body = _safe_body(text)
        if section.level >= 1:
            heading = _heading_text(section.heading)
            hashes = "#" * min(section.level, 6)
            blocks.append(f"{hashes} {heading}" if heading else hashes)
        if body:
            blocks.append(body)
    if doc.references:
        blocks.append("## References")
        blocks.extend(_render_reference(r) for r in sorted(doc.references, key=lambda r: r.marker))
    return "\n\n".join(blocks) + "\n"


# --------------------------------------------------------------------------- reference entries

_MARKER_LIKE = re.compile(r"\s*\^?\[?\s*\d{1,6}\s*\]?\s*")


def _parse_reference_list(lines: list[str]) -> list[RefEntry] | None:
    """Entries of a References section (read by :func:`core.reference_entries.read_entries`),
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
    return _one_line(name).rstrip(":").strip().casefold() in REFERENCE_HEADINGS


# --------------------------------------------------------------------------- definitions

_DEF_START = re.compile(r"^ {0,3}\[")
_DEFINITION = re.compile(
    rf"^ {{0,3}}\[(?P<label>(?:\\.|[^\[\]\\])+)\]:\s*(?P<url><[^<>\n]*>|\S+)"
    rf"(?:\s+(?P<title>{LINK_TITLE}))?\s*$",
    re.S,
)


def _normalize_label(label: str) -> str:
    return _WS.sub(" ", label.strip()).casefold()


@dataclass
class _Definition:
    label: str  # normalized
    url: str
    title: str
    lines: list[int]


def _parse_definitions(lines: list[str], covered: bytearray) -> list[_Definition]:
    """Link reference definitions at top level: the non-blank lines markdown-it consumed
    without emitting a token."""
    groups: list[list[int]] = []
    for i, line in enumerate(lines):
        if covered[i] or _is_blank(line):
            continue
        if _DEF_START.match(line) or not groups or groups[-1][-1] != i - 1:
            groups.append([i])
        else:
            groups[-1].append(i)
    found: list[_Definition] = []
    for group in groups:
        m = _DEFINITION.match("\n".join(lines[i] for i in group))
        if not m:
            continue
        title = m.group("title") or ""
        found.append(
            _Definition(
                label=_normalize_label(m.group("label")),
                url=unangle(m.group("url")),
                title=_one_line(title[1:-1]) if title else "",
                lines=group,
            )
        )
    return found


# --------------------------------------------------------------------------- citations


class _Citations:
    """Reference list under construction while converting links to markers."""

    def __init__(self, refs: list[RefEntry], labels: dict[str, _Definition]):
        self.refs: dict[int, RefEntry] = {r.marker: r for r in refs}
        self.labels = labels
        self.by_url: dict[str, int] = {}
        self.top = max(self.refs, default=0)
        for marker in sorted(self.refs):
            url = self.refs[marker].url
            if url:
                self.by_url.setdefault(url, marker)

    def add(self, ref: RefEntry) -> None:
        if ref.marker not in self.refs:
            self.refs[ref.marker] = ref
            self.top = max(self.top, ref.marker)
            if ref.url:
                self.by_url.setdefault(ref.url, ref.marker)

    def marker_for(self, url: str, title: str) -> int:
        if url in self.by_url:
            return self.by_url[url]
        marker = self.top + 1
        self.add(RefEntry(marker=marker, url=url, title=title or url))
        return marker

    def convert(self, lines: list[str], skip: list[bool]) -> list[str]:
        out: list[str] = []
        i, n = 0, len(lines)
        while i < n:
            if skip[i] or _is_blank(lines[i]):
                out.append(lines[i])
                i += 1
                continue
            j = i
            while j < n and not skip[j] and not _is_blank(lines[j]):
                j += 1
            chunk = "\n".join(lines[i:j])
            if "](" in chunk or "][" in chunk or (self.labels and "[" in chunk):
                chunk = self._convert_chunk(chunk)
            out.extend(chunk.split("\n"))
            i = j
        return out

    def _convert_chunk(self, chunk: str) -> str:
        masked = _mask_code_spans(chunk)
        pieces: list[str] = []
        pos = 0
        for m in LINKISH.finditer(masked):
            replacement = self._replacement(m, chunk)
            if replacement is None:
                continue
            if chunk[m.end() : m.end() + 1] in ("(", "["):
                replacement += " "
            pieces.append(chunk[pos : m.start()])
            pieces.append(replacement)
            pos = m.end()
        pieces.append(chunk[pos:])
        return "".join(pieces)

    def _replacement(self, m: re.Match[str], chunk: str) -> str | None:
        text = chunk[m.start("text") : m.end("text")].strip()
        marker_like = not text or _MARKER_LIKE.fullmatch(text) is not None
        plain = "" if marker_like else _one_line(unescape_link_text(text))
        marker: int | None = None
        if m.group("url") is not None or m.group(0).endswith(")"):
            url = unangle(m.group("url") or "")
            if not HTTP.match(url):
                return None
            link_title = m.group("title")
            title = plain or (_one_line(link_title[1:-1]) if link_title else "") or url
            marker = self.marker_for(url, title)
        else:
            label = m.group("label")
            if label is not None and label.strip():
                if marker_like:  # [1][2]: two markers, not a link
                    return None
                key = _normalize_label(label)
            elif marker_like:  # [1] or [1][]: a marker stays a marker
                return None
            else:  # [text][] or shortcut [text]
                key = _normalize_label(text)
            if key.isdigit():
                marker = int(key) if int(key) in self.refs else None
            elif key in self.labels and HTTP.match(self.labels[key].url):
                definition = self.labels[key]
                marker = self.marker_for(definition.url, plain or definition.title)
        if marker is None:
            return None
        return f"[{marker}]" if marker_like else f"{text} [{marker}]"


# --------------------------------------------------------------------------- parse


def _front_matter(lines: list[str]) -> tuple[str | None, int]:
    """(title or None, number of lines up to the end of the front matter) for a YAML
    block at the top (read by :func:`core.headers.front_matter`); (None, 0) for none.

    A block with no field is not front matter. Its ``title`` is the YAML value, or, when
    the block is not valid YAML, the ``title:`` field as written."""
    start = next((i for i, line in enumerate(lines) if not _is_blank(line)), 0)
    found = front_matter(lines, start)
    if found is None or not found.fields:
        return None, 0
    title: object = found.data.get("title") if found.error is None else None
    if found.error is not None:
        title = next((f.value.strip("\"'") for f in found.fields if f.label == "title"), None)
    if not isinstance(title, str | int | float) or isinstance(title, bool):
        title = None
    return (_heading_text(str(title)) or None) if title is not None else None, found.end + 1


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
    if not text or not text.strip():
        raise EvergreenError(EMPTY_MESSAGE)
    # NUL (which PostgreSQL text refuses) and bidi overrides (which make text read other
    # than it is) never enter a report
    text = strip_bidi(_normalize_newlines(text.removeprefix("\ufeff")).replace("\x00", ""))
    lines = text.split("\n")
    fm_title, fm_lines = _front_matter(lines)
    for i in range(fm_lines):
        lines[i] = ""
    if all(_is_blank(line) for line in lines):
        if fm_title is None:
            raise EvergreenError(EMPTY_MESSAGE)
        return ReportDoc(title=fm_title, sections=[], references=[])

    n = len(lines)
    covered, opaque, headings = _blocks(lines)
    title, raw = _outline(lines, headings)
    if title is None:
        title = fm_title or _heading_text(default_title)
    references: list[RefEntry] = []
    last = raw[-1]
    if last.level >= 1 and _is_reference_heading(last.heading):
        parsed = _parse_reference_list(lines[last.start : last.end])
        if parsed is not None:
            references = parsed
            raw.pop()
    limit = raw[-1].end if raw else 0
    citations, removed = _citations(lines[:limit], covered, references, n)
    sections: list[tuple[str, int, str]] = []
    for sec in raw:
        idxs = [i for i in range(sec.start, sec.end) if not removed[i]]
        body_lines = [lines[i] for i in idxs]
        skip = [bool(opaque[i]) or not covered[i] for i in idxs]
        body_lines = _strip_blank_edges(citations.convert(body_lines, skip))
        if sec.level == 0 and not body_lines:
            continue
        sections.append((sec.heading, sec.level, "\n".join(body_lines)))
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
    tokens: list[Token] = _MD.parse("\n".join(lines), {})
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
                headings.append((a, b, int(tok.tag[1]), _heading_text(tokens[idx + 1].content)))
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
    if headings and headings[0][2] == 1 and all(_is_blank(ln) for ln in lines[: headings[0][0]]):
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


def _citations(
    lines: list[str], covered: bytearray, references: list[RefEntry], n: int
) -> tuple[_Citations, bytearray]:
    """Link reference definitions (top level, outside a parsed reference list): a numeric
    one becomes that reference and its lines go; the others serve reference links."""
    removed = bytearray(n)
    labels: dict[str, _Definition] = {}
    citations = _Citations(references, labels)
    for definition in _parse_definitions(lines, covered):
        if definition.label.isdigit():
            marker = int(definition.label)
            for i in definition.lines:
                removed[i] = 1
            if marker >= 1:
                citations.add(RefEntry(marker, definition.url, definition.title or definition.url))
        else:
            labels.setdefault(definition.label, definition)
    return citations, removed
