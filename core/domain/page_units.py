"""A page cut into claim units: the sentences, list items, titles and header fields the
claim diff (:mod:`core.domain.claim_diff`) compares.

:func:`split_sentences` knows a page's layout — header blocks (read by
:mod:`core.domain.keyfacts`), rst and Markdown markup, list items, tables, comments — and hands
each run of prose to the one sentence rule, :func:`core.domain.sentences.split_prose`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.domain.hashing import normalise_newlines
from core.domain.header_blocks import header_blocks
from core.domain.key_fact import KeyFact
from core.domain.sentences import split_prose

__all__ = ["HEADER_LAYOUTS", "LINE_LAYOUTS", "fact_unit", "split_sentences"]

# A line made only of markup characters: rst section under/overlines, table
# borders (``+----+``, ``===== =====``), transitions, bare comment markers.
_MARKUP_LINE = re.compile(r"^\s*(?:[=\-~^\"'`#*+_.:|<>]{2,}[ \t=\-~^\"'`#*+_.:|<>]*)?\s*$")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_.:])\1{2,}\s*$")
_TABLE_BORDER = re.compile(r"^\s*(?:\+[-=+]+\+|=+(?:\s+=+)+|-+(?:\s+-+)+)\s*$")
_MARKUP_CHARS = frozenset("=-~^\"'`#*+_.:|<>")
_ITEM_FIRST_CHARS = frozenset("-*+•#(.")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#\.|\(?[a-zA-Z0-9]{1,3}\))\s+\S")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_WS = re.compile(r"\s+")
# An rst comment: ".." alone or followed by text that is not a directive, target,
# footnote/citation or substitution definition.
_RST_COMMENT = re.compile(r"^(\s*)\.\.(?:\s*$|\s+(?!\[|_|\||[\w:+-]+::)\S)")
_EMACS_START = re.compile(r"^\s*(?:\.\.\s*)?Local Variables:\s*$")
_EMACS_END = re.compile(r"^\s*End:\s*$")
_EXPLICIT_MARKUP = re.compile(r"^\s*\.\.\s")


#: layouts whose whole block is a header: fields are judged field by field, other lines
#: (``---`` delimiters, YAML comments, ``<pre>`` tags and fences) are not content
HEADER_LAYOUTS = frozenset({"rfc822", "front-matter", "closed-block", "pre-block"})
#: line-based layouts whose fields are sentence units of their own
LINE_LAYOUTS = HEADER_LAYOUTS | {"bullets", "table", "field-line"}


def fact_unit(fact: KeyFact) -> str:
    """The sentence unit :func:`split_sentences` yields for a key fact's source text."""
    return _WS.sub(" ", fact.raw).strip()


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence/claim units.

    Units end at sentence ends (``. ! ?`` followed by a capital or digit), blank
    lines, list items, section titles and header fields. Each key-fact field at
    the top of the page (see :func:`core.domain.header_blocks.header_blocks`: RFC-822 and
    YAML headers, ``---``-closed blocks, ``<pre>`` and fenced header blocks, bullet
    headers, definition tables) is one unit of its own, with its continuation lines,
    and is never sentence-split; the ``---`` delimiters, comments, ``<pre>`` tags and
    fences of a header block are dropped. Markup-only lines (rst under/overlines, table
    borders, transitions) are dropped and whitespace is collapsed. Deterministic and
    regex-only. The units of the last few texts are kept: an update splits a changed
    page's old text, which the update before split as new (issue 42).
    """
    return list(_split_cached(text))


@lru_cache(maxsize=256)
def _split_cached(text: str) -> tuple[str, ...]:
    return tuple(_split(text))


def _split(text: str) -> list[str]:
    text = normalise_newlines(text)
    if text.startswith("\ufeff"):
        text = text[1:]
    field_at, drop_at = _header_units(text)
    segments = _LineWalk(text.split("\n"), field_at, drop_at).segments()
    out: list[str] = []
    for seg, splittable in segments:
        if splittable:
            out.extend(split_prose(seg))
        elif seg:
            out.append(seg)
    return out


def _header_units(text: str) -> tuple[dict[int, tuple[int, str]], dict[int, int]]:
    """The page's header fields by line offset (their end offset and unit), and its
    header blocks by start offset (their end: lines there that are not content)."""
    field_at: dict[int, tuple[int, str]] = {}  # line offset -> (end offset, unit)
    drop_at: dict[int, int] = {}  # header block start -> end (lines that are not content)
    for block in header_blocks(text):
        if block.layout in LINE_LAYOUTS:
            for fact in block.facts:
                # keyed by its line's start (an indented field starts after its blanks)
                line_start = text.rfind("\n", 0, fact.start) + 1
                field_at[line_start] = (fact.start + len(fact.raw), fact_unit(fact))
            if block.layout in HEADER_LAYOUTS:
                drop_at[block.start] = block.end
    return field_at, drop_at


class _LineWalk:
    """One pass over a page's lines, cutting them into segments: (text, may be
    sentence-split). Header fields, table rows and section titles are segments of their
    own; prose lines gather until a blank line, markup or a list item ends them."""

    def __init__(
        self, lines: list[str], field_at: dict[int, tuple[int, str]], drop_at: dict[int, int]
    ) -> None:
        self.lines = lines
        self.field_at = field_at
        self.drop_at = drop_at
        self.last_header = max([*field_at, *drop_at], default=-1)
        self.out: list[tuple[str, bool]] = []
        self.cur: list[str] = []
        self.table = False
        self.comment_indent: int | None = None
        self.emacs = False
        self.hold = -1  # lines starting before this offset belong to a header field or block

    def flush(self) -> None:
        if self.cur:
            self.out.append((" ".join(self.cur), True))
            self.cur.clear()

    def segments(self) -> list[tuple[str, bool]]:
        pos = 0
        for i, line in enumerate(self.lines):
            here = pos
            pos += len(line) + 1
            if (here <= self.last_header or here < self.hold) and self._in_header(here):
                continue
            stripped = line.strip()
            first = stripped[:1]
            if self._not_content(line, stripped, first) or self._own_unit(i, line, stripped, first):
                continue
            if (first in _ITEM_FIRST_CHARS or first.isalnum()) and (
                _LIST_ITEM.match(line) or _MD_HEADING.match(line) or _EXPLICIT_MARKUP.match(line)
            ):
                self.flush()
            self.cur.append(stripped)
        self.flush()
        return self.out

    def _in_header(self, here: int) -> bool:
        """Whether the line at offset ``here`` is done with as part of the header: a
        field's first line (its unit), or a line inside a field or header block."""
        if here in self.drop_at:
            self.hold = max(self.hold, self.drop_at[here])
        field = self.field_at.get(here)
        if field is not None:
            self.flush()
            self.table = False
            self.out.append((field[1], False))
            self.hold = max(self.hold, field[0])
            return True
        return here < self.hold

    def _not_content(self, line: str, stripped: str, first: str) -> bool:
        """Whether the line is no content (editor settings, rst comments, blank lines,
        markup-only lines), ending the prose before it."""
        if self.emacs or (first == "L" or first == ".") and _EMACS_START.match(line):
            self.flush()  # editor settings block ("Local Variables: ... End:"), not content
            self.emacs = not _EMACS_END.match(line)
            return True
        if self.comment_indent is not None:
            if not stripped or len(line) - len(line.lstrip()) > self.comment_indent:
                return True  # inside an rst comment
            self.comment_indent = None
        if not stripped:
            self.flush()
            self.table = False
            return True
        if first == ".":
            m = _RST_COMMENT.match(line)
            if m:
                self.flush()
                self.comment_indent = len(m.group(1))
                return True
        if first in _MARKUP_CHARS:
            if _TABLE_BORDER.match(line):
                self.flush()
                self.table = True
                return True
            if _MARKUP_LINE.match(line):
                self.flush()
                return True
        return False

    def _own_unit(self, i: int, line: str, stripped: str, first: str) -> bool:
        """Whether the line is a segment of its own: a table row or a section title."""
        if self.table or first == "|":
            self.flush()
            self.out.append((stripped, True))
            return True
        body = self.lines
        nxt = body[i + 1].lstrip()[:1] if i + 1 < len(body) else ""
        if nxt and nxt in _MARKUP_CHARS:
            under = body[i + 1]
            if _UNDERLINE.match(under) and len(under.strip()) >= len(stripped) - 2:
                self.flush()  # section title
                self.out.append((stripped, True))
                return True
        return False
