"""A page cut into claim units: the sentences, list items, titles and header fields the
claim diff (:mod:`core.claim_diff`) compares.

:func:`split_sentences` knows a page's layout — header blocks (read by
:mod:`core.keyfacts`), rst and Markdown markup, list items, tables, comments — and hands
each run of prose to the one sentence rule, :func:`core.sentences.split_prose`.
"""

from __future__ import annotations

import re

from core.hashing import normalise_newlines
from core.header_blocks import header_blocks
from core.key_fact import KeyFact
from core.sentences import split_prose

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
#: (``---`` delimiters, YAML comments) are not content
HEADER_LAYOUTS = frozenset({"rfc822", "front-matter", "closed-block"})
#: line-based layouts whose fields are sentence units of their own
LINE_LAYOUTS = HEADER_LAYOUTS | {"bullets", "table", "field-line"}


def fact_unit(fact: KeyFact) -> str:
    """The sentence unit :func:`split_sentences` yields for a key fact's source text."""
    return _WS.sub(" ", fact.raw).strip()


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence/claim units.

    Units end at sentence ends (``. ! ?`` followed by a capital or digit), blank
    lines, list items, section titles and header fields. Each key-fact field at
    the top of the page (see :func:`core.keyfacts.header_blocks`: RFC-822 and
    YAML headers, ``---``-closed blocks, bullet headers, definition tables) is
    one unit of its own, with its continuation lines, and is never
    sentence-split; the ``---`` delimiters and comments of a header block are
    dropped. Markup-only lines (rst under/overlines, table borders, transitions)
    are dropped and whitespace is collapsed. Deterministic and regex-only.
    """
    text = normalise_newlines(text)
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    field_at: dict[int, tuple[int, str]] = {}  # line offset -> (end offset, unit)
    drop_at: dict[int, int] = {}  # header block start -> end (lines that are not content)
    for block in header_blocks(text):
        if block.layout in LINE_LAYOUTS:
            for fact in block.facts:
                field_at[fact.start] = (fact.start + len(fact.raw), fact_unit(fact))
            if block.layout in HEADER_LAYOUTS:
                drop_at[block.start] = block.end
    last_header = max([*field_at, *drop_at], default=-1)
    segments: list[tuple[str, bool]] = []  # (text, may be sentence-split)

    cur: list[str] = []
    table = False

    def flush() -> None:
        if cur:
            segments.append((" ".join(cur), True))
            cur.clear()

    body = lines
    comment_indent: int | None = None
    emacs = False
    pos = 0
    hold = -1  # lines starting before this offset belong to a header field or block
    for i, line in enumerate(body):
        here = pos
        pos += len(line) + 1
        if here <= last_header or here < hold:
            if here in drop_at:
                hold = max(hold, drop_at[here])
            field = field_at.get(here)
            if field is not None:
                flush()
                table = False
                segments.append((field[1], False))
                hold = max(hold, field[0])
                continue
            if here < hold:
                continue
        stripped = line.strip()
        first = stripped[:1]
        if emacs or (first == "L" or first == ".") and _EMACS_START.match(line):
            flush()  # editor settings block ("Local Variables: ... End:"), not content
            emacs = not _EMACS_END.match(line)
            continue
        if comment_indent is not None:
            if not stripped or len(line) - len(line.lstrip()) > comment_indent:
                continue  # inside an rst comment
            comment_indent = None
        if not stripped:
            flush()
            table = False
            continue
        if first == ".":
            m = _RST_COMMENT.match(line)
            if m:
                flush()
                comment_indent = len(m.group(1))
                continue
        if first in _MARKUP_CHARS:
            if _TABLE_BORDER.match(line):
                flush()
                table = True
                continue
            if _MARKUP_LINE.match(line):
                flush()
                continue
        if table or first == "|":
            flush()
            segments.append((stripped, True))
            continue
        nxt = body[i + 1].lstrip()[:1] if i + 1 < len(body) else ""
        if nxt and nxt in _MARKUP_CHARS:
            under = body[i + 1]
            if _UNDERLINE.match(under) and len(under.strip()) >= len(stripped) - 2:
                flush()  # section title
                segments.append((stripped, True))
                continue
        if (first in _ITEM_FIRST_CHARS or first.isalnum()) and (
            _LIST_ITEM.match(line) or _MD_HEADING.match(line) or _EXPLICIT_MARKUP.match(line)
        ):
            flush()
        cur.append(stripped)
    flush()

    out: list[str] = []
    for seg, splittable in segments:
        if splittable:
            out.extend(split_prose(seg))
        elif seg:
            out.append(seg)
    return out
