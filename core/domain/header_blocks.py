"""The blocks of key facts at the top of a page: where each layout may stand, and when it counts.

:func:`header_blocks` understands:

1. RFC-822 header blocks: ``Key: value`` lines with indented continuation lines, at
   least two fields, ended by a blank line.
2. YAML front matter between ``---`` lines, and ``key: value`` blocks with no opening
   ``---`` that a ``---`` line closes (at least two fields, no blank line).

   Both are read by :mod:`core.domain.headers` (PyYAML, :mod:`email.parser`); this module
   decides where such a block may stand and when it counts.
3. Markdown bullet headers (``* Key: value``, ``- Key: value``, ``* **Key:** value``)
   and bold-key lines (``**Status:** Final``); key-less bullets in the block are skipped.
4. Definition tables: a two-column Markdown table whose first column holds the keys.
5. HTML ``<meta name="..." content="...">`` tags.
6. Preformatted header blocks: ``Key: value`` lines (at least two fields) making up the
   whole of an HTML ``<pre>`` … ``</pre>`` block (MediaWiki pages) or of a Markdown
   fence (```` ``` ```` or ``~~~`` with no info string). Field lines start at the
   block's base indentation (that of its first line, give or take one blank); a line
   indented further continues the field before it; any other line, a blank line inside
   included, means the block is no header (a code sample).

A header block must start at the top of the page: at its first non-blank line, after a
YAML front matter block, or after an H1 title line (``# Title``) and blank lines. A lone
``Status: Draft`` line (a status or stage field standing as its own paragraph) there
counts too. A preformatted header block may also follow HTML comments, and a short lead
(a template line, a notice, a list of recent changes: at most :data:`_LEAD_LINES` lines)
before any section heading, when it is the first preformatted block of the page; after
such a lead it counts only if it declares a status or stage field.

Only the first :data:`SCAN_CHARS` characters are read; everything is line and regex based
and linear in the size of the page head.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from core.domain.fact_values import clean_value
from core.domain.head_lines import (
    FieldBuilder,
    HeadLines,
    Line,
    NeedMoreLines,
    has_line,
    is_blank,
    line_texts,
    skip_blank,
    split_lines,
)
from core.domain.headers import (
    FIELD,
    FIELD_VALUE,
    front_matter_end,
    is_delimiter,
    read_rfc822,
    read_yaml_fields,
)
from core.domain.key_fact import KeyFact, make_fact

Layout = Literal[
    "rfc822",
    "front-matter",
    "closed-block",
    "bullets",
    "table",
    "field-line",
    "html-meta",
    "pre-block",
]

#: only this many characters at the top of a page are read
SCAN_CHARS = 65_536
_MAX_HEAD_LINES = 600  # lines of the page head that are split off
_FIRST_LINES = 48  # lines split off first; most headers end well before

__all__ = ["SCAN_CHARS", "HeaderBlock", "Layout", "header_blocks"]


@dataclass(frozen=True)
class HeaderBlock:
    """A block of key facts in a page: its layout, its extent and its facts.

    ``start``/``end`` are character offsets into the content (``end`` excludes the last
    line's line break); for ``front-matter`` and ``closed-block`` they include the
    ``---`` delimiter lines. For ``html-meta`` the block spans the first to last tag.
    """

    layout: Layout
    start: int
    end: int
    facts: tuple[KeyFact, ...]


_KEY = r"[A-Za-z_][\w.()/&'+-]*(?: [\w.()/&'+-]+){0,4}"  # a label, as core.domain.headers reads it
_FIELD = FIELD
_BULLET_FIELD = re.compile(
    r"^[ ]{0,3}[*+-][ \t]+(?:\*\*(" + _KEY + r")(?::\*\*|\*\*[ \t]*:)"
    r"|__(" + _KEY + r")(?::__|__[ \t]*:)"
    r"|(" + _KEY + r")[ \t]*:)(?:[ \t]+" + FIELD_VALUE + r"|)[ \t]*$"
)
_BOLD_FIELD = re.compile(
    r"^(?:\*\*(" + _KEY + r")(?::\*\*|\*\*[ \t]*:)|__(" + _KEY + r")(?::__|__[ \t]*:))"
    r"(?:[ \t]+" + FIELD_VALUE + r"|)[ \t]*$"
)
_BULLET = re.compile(r"^[ ]{0,3}[*+-][ \t]+\S")
_ATX_H1 = re.compile(r"^[ ]{0,3}#[ \t]+\S")
_SETEXT_H1 = re.compile(r"^[ ]{0,3}=+[ \t]*$")
_TABLE_SEP = re.compile(r"^:?-{2,}:?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_TABLE_KEY = re.compile(r"^[A-Za-z][\w .()/&'+-]{0,40}$")
_PRE_OPEN = re.compile(r"^[ ]{0,3}<pre(?:\s[^>]*)?>[ \t]*$", re.IGNORECASE)
_PRE_CLOSE = re.compile(r"^[ \t]*</pre>[ \t]*$", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})[ \t]*$")  # no info string: not code
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}(?:[ \t]|$)|^=+[^=].*=+[ \t]*$|^[ ]{0,3}(?:=+|-+)[ \t]*$")
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
#: lines of lead (prose before it) a preformatted header block may follow
_LEAD_LINES = 24
#: lines a preformatted header block may hold
_PRE_LINES = 200
_HEADER_ROW_KEYS = frozenset(
    {"", "field", "fields", "key", "name", "property", "attribute", "item", "parameter", "value"}
)


def _block(layout: Layout, facts: list[KeyFact], lines: list[Line], i: int, j: int) -> HeaderBlock:
    """A block over lines ``i`` to ``j - 1``."""
    end = lines[j - 1][0] + len(lines[j - 1][1])
    return HeaderBlock(layout, lines[i][0], end, tuple(facts))


def _enough(facts: list[KeyFact]) -> bool:
    """At least two fields, or one typed field."""
    return len(facts) >= 2 or any(f.kind != "other" for f in facts)


# --------------------------------------------------------------------------- layouts


def _front_matter(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """YAML front matter whose ``---`` is line ``i``; (block, index after it)."""
    texts = line_texts(lines)
    j = front_matter_end(texts, i)
    if j is None:
        has_line(lines, len(lines))  # the closing line may be further down
        return None, i + 1
    fields, _data, error = read_yaml_fields(texts, i + 1, j)
    if error is not None and not fields:
        return None, i + 1
    b = FieldBuilder(content, lines)
    b.add(fields)
    return _block("front-matter", b.facts(), lines, i, j + 1), j + 1


def _closed_block(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """``key: value`` lines closed by a ``---`` line (no opening ``---``, no blank line)."""
    if not _FIELD.match(lines[i][1]):
        return None, i
    j = i + 1
    while has_line(lines, j) and lines[j][1].strip() and not is_delimiter(lines[j][1]):
        j += 1
    if not has_line(lines, j) or not is_delimiter(lines[j][1]):
        return None, i
    fields, _data, _error = read_yaml_fields(line_texts(lines), i, j)
    if len(fields) < 2:
        return None, i
    b = FieldBuilder(content, lines)
    b.add(fields)
    return _block("closed-block", b.facts(), lines, i, j + 1), j + 1


def _rfc822(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """An RFC-822 block from line ``i``: >= 2 fields, continuation lines, a blank line after."""
    fields, j = read_rfc822(line_texts(lines), i)
    if j >= len(lines):
        has_line(lines, j)  # the block may go on past the lines split off
    if len(fields) >= 2 and (not has_line(lines, j) or is_blank(lines, j)):
        b = FieldBuilder(content, lines)
        b.add(fields)
        return _block("rfc822", b.facts(), lines, i, j), j
    return None, i


def _field_line(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A lone ``Status: Draft`` line standing as its own paragraph (status/stage keys only)."""
    m = _FIELD.match(lines[i][1])
    if not m or not m.group(2) or (has_line(lines, i + 1) and not is_blank(lines, i + 1)):
        return None, i
    b = FieldBuilder(content, lines)
    b.add(read_rfc822(line_texts(lines), i, i + 1)[0])
    facts = b.facts()
    if facts[0].kind not in ("status", "stage") or len(facts[0].value) > 80:
        return None, i
    return _block("field-line", facts, lines, i, i + 1), i + 1


def _bullets(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A Markdown bullet header (or bold-key lines) from line ``i``."""
    b = FieldBuilder(content, lines)
    j = i
    in_item = False  # the previous item was keyed (continuation lines extend it)
    bold_only = True
    while has_line(lines, j):
        line = lines[j][1]
        m = _BULLET_FIELD.match(line)
        bold = None if m else _BOLD_FIELD.match(line)
        if m:
            b.open(m.group(1) or m.group(2) or m.group(3), m.group(4), j)
            in_item, bold_only = True, False
        elif bold:
            b.open(bold.group(1) or bold.group(2), bold.group(3), j)
            in_item = True
        elif _BULLET.match(line):
            in_item, bold_only = False, False  # key-less bullet: skipped
        elif line[:1] in (" ", "\t") and line.strip() and j > i:
            if in_item:
                b.extend(line.strip(), j)
        elif (
            bold_only
            and b.fields
            and not line.strip()
            and has_line(lines, j + 1)
            and _BOLD_FIELD.match(lines[j + 1][1])
        ):
            pass  # bold-key lines separated by blank lines
        else:
            break
        j += 1
    facts = b.facts()
    if j > i and facts and _enough(facts):
        return _block("bullets", facts, lines, i, j), j
    return None, i


def _table(content: str, lines: list[Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A two-column definition table (``| Status | Final |``) from line ``i``."""
    rows: list[tuple[int, list[str]]] = []
    j = i
    while has_line(lines, j) and lines[j][1].lstrip()[:1] == "|":
        line = lines[j][1].strip()
        inner = line[1:-1] if line.endswith("|") and len(line) > 1 else line[1:]
        rows.append((j, [c.strip() for c in _CELL_SPLIT.split(inner)]))
        j += 1
    if not rows or any(len(cells) != 2 for _, cells in rows):
        return None, i
    facts: list[KeyFact] = []
    for r, (k, cells) in enumerate(rows):
        if all(_TABLE_SEP.match(c.replace(" ", "")) for c in cells):
            continue
        header_row = r == 0 and len(rows) > 1 and _TABLE_SEP.match(rows[1][1][0].replace(" ", ""))
        key = clean_value(cells[0])
        if header_row and key.casefold() in _HEADER_ROW_KEYS:
            continue
        if not _TABLE_KEY.match(key) or len(key.split()) > 5:
            continue
        start = lines[k][0]
        facts.append(make_fact(key, cells[1], content[start : start + len(lines[k][1])], start))
    if facts and _enough(facts):
        return _block("table", facts, lines, i, j), j
    return None, i


def _pre_close(lines: list[Line], i: int) -> int | None:
    """The line closing the preformatted block opened at line ``i``, if it opens one."""
    opener = lines[i][1]
    fence = _FENCE_OPEN.match(opener)
    if fence is None and not _PRE_OPEN.match(opener):
        return None
    mark = fence.group(1) if fence else ""
    j = i + 1
    while has_line(lines, j) and j - i <= _PRE_LINES:
        line = lines[j][1]
        if fence is None:
            if _PRE_CLOSE.match(line):
                return j
        else:
            text = line.strip()
            if text[:1] == mark[0] and len(text) >= len(mark) and text == text[0] * len(text):
                return j
        j += 1
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _pre_block(
    content: str, lines: list[Line], i: int, typed: bool = False
) -> tuple[HeaderBlock | None, int]:
    """A preformatted block opened at line ``i`` whose lines are all ``Key: value`` fields
    (>= 2) and their continuation lines; with ``typed``, one field must be a status or
    stage."""
    close = _pre_close(lines, i)
    if close is None:
        return None, i
    first, last = i + 1, close  # the block's inner lines, less blank ones at its edges
    while first < last and is_blank(lines, first):
        first += 1
    while last > first and is_blank(lines, last - 1):
        last -= 1
    if last - first < 2:
        return None, i
    base = _indent(lines[first][1])
    texts: list[str] = []  # the inner lines as an RFC-822 block reads them
    shifted: list[Line] = []  # each line from its first non-blank character
    for k in range(first, last):
        offset, line = lines[k]
        indent = _indent(line)
        body = line[indent:]
        if not body:
            return None, i  # a blank line inside: not a header
        texts.append(body if indent <= base + 1 else " " + body)
        shifted.append((offset + indent, body))
    fields, end = read_rfc822(texts)
    if end < len(texts) or len(fields) < 2:
        return None, i
    b = FieldBuilder(content, shifted)
    b.add(fields)
    facts = b.facts()
    if typed and not any(f.kind in ("status", "stage") for f in facts):
        return None, i
    return _block("pre-block", facts, lines, i, close + 1), close + 1


def _pre_header(content: str, lines: list[Line], i: int) -> HeaderBlock | None:
    """The first preformatted block from line ``i``, if it is a header block: after blank
    lines, HTML comments and an H1 title, or after a lead of at most :data:`_LEAD_LINES`
    lines (then with a status or stage field); never after a section heading."""
    lead = 0
    titled = False
    while has_line(lines, i):
        line = lines[i][1]
        if is_blank(lines, i):
            i += 1
            continue
        if line.lstrip().startswith(_COMMENT_OPEN):
            at = line.find(_COMMENT_OPEN) + len(_COMMENT_OPEN)
            while line.find(_COMMENT_CLOSE, at) < 0:
                i, at = i + 1, 0
                if not has_line(lines, i):
                    return None  # an unclosed comment
                line = lines[i][1]
            if line[line.find(_COMMENT_CLOSE, at) + len(_COMMENT_CLOSE) :].strip():
                lead += 1  # text after the comment
            i += 1
            continue
        if _PRE_OPEN.match(line) or _FENCE_OPEN.match(line):
            return _pre_block(content, lines, i, typed=lead > 0)[0]
        title = 0 if titled or lead else _is_h1(lines, i)
        if title:
            titled = True
            i += title
            continue
        if _HEADING.match(line) or lead >= _LEAD_LINES:
            return None
        lead += 1
        i += 1
    return None


_META_TAG = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"([\w:-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))")


def _html_meta(content: str, head: str) -> HeaderBlock | None:
    """``<meta name|property|itemprop="..." content="...">`` tags in an HTML page head."""
    facts: list[KeyFact] = []
    end = head.lower().find("</head>")
    for m in _META_TAG.finditer(head, 0, end if end >= 0 else len(head)):
        attrs = {
            a.group(1).casefold(): html.unescape(a.group(2) or a.group(3) or a.group(4) or "")
            for a in _ATTR.finditer(m.group(0))
        }
        name = attrs.get("name") or attrs.get("property") or attrs.get("itemprop")
        if not name or "content" not in attrs:
            continue
        facts.append(make_fact(name.strip(), attrs["content"], m.group(0), m.start()))
    if not facts:
        return None
    last = facts[-1]
    return HeaderBlock("html-meta", facts[0].start, last.start + len(last.raw), tuple(facts))


def _looks_like_html(head: str) -> bool:
    top = head[:4096].lstrip("\ufeff \t\r\n")
    return top[:1] == "<" and "<meta" in head[:SCAN_CHARS].lower()


def _is_h1(lines: list[Line], i: int) -> int:
    """Number of lines of an H1 title at line ``i`` (0 if none)."""
    if _ATX_H1.match(lines[i][1]):
        return 1
    if lines[i][1].strip() and has_line(lines, i + 1) and _SETEXT_H1.match(lines[i + 1][1]):
        return 2
    return 0


def _body_header(content: str, lines: list[Line], i: int) -> HeaderBlock | None:
    """The header block at body line ``i`` or right after an H1 title there; else a
    preformatted header block near there (:func:`_pre_header`)."""
    return _line_header(content, lines, i) or _pre_header(content, lines, i)


def _line_header(content: str, lines: list[Line], i: int) -> HeaderBlock | None:
    """The line-based header block at body line ``i`` or right after an H1 title there."""
    for attempt in range(2):
        i = skip_blank(lines, i)
        if not has_line(lines, i):
            return None
        for parse in (_rfc822, _bullets, _table, _field_line):
            block, _ = parse(content, lines, i)
            if block is not None:
                return block
        title = _is_h1(lines, i) if attempt == 0 else 0
        if not title:
            return None
        i += title
    return None


def header_blocks(content: str) -> list[HeaderBlock]:
    """The blocks of key facts at the top of ``content``, in document order.

    At most: a YAML front matter (or a ``---``-closed ``key: value`` block), then one
    body header block (RFC-822, bullets, table, a lone status line or a preformatted
    block), and HTML meta tags.
    """
    return list(_cached_blocks(content)) if content else []


def page_body(content: str) -> str:
    """``content`` without its header blocks: what the page says, not the fields it
    declares (dates, authors, formats)."""
    out, at = [], 0
    for block in header_blocks(content):
        out.append(content[at : block.start])
        at = max(at, block.end)
    out.append(content[at:])
    return "".join(out)


@lru_cache(maxsize=8)
def _cached_blocks(content: str) -> tuple[HeaderBlock, ...]:
    # One change is read several times (sentences, reasons): the same string object
    # hits this cache at the cost of its (cached) hash.
    head = content[:SCAN_CHARS]
    try:
        return tuple(_parse(content, head, split_lines(head, _FIRST_LINES)))
    except NeedMoreLines:
        lines = split_lines(head, _MAX_HEAD_LINES)
        lines.truncated = False  # a header does not run past this many lines
        return tuple(_parse(content, head, lines))


def _parse(content: str, head: str, lines: HeadLines) -> list[HeaderBlock]:
    blocks: list[HeaderBlock] = []
    i = skip_blank(lines, 0)
    if has_line(lines, i):
        block: HeaderBlock | None
        if is_delimiter(lines[i][1]):
            block, i = _front_matter(content, lines, i)
        else:
            block, i = _closed_block(content, lines, i)
        if block is not None:
            blocks.append(block)
        body = _body_header(content, lines, i)
        if body is not None:
            blocks.append(body)
    if _looks_like_html(head):
        meta = _html_meta(content, head)
        if meta is not None:
            blocks.append(meta)
    return blocks
