"""Read the "key facts" a page declares about itself near its top.

A key fact is a labelled value that a page states as a field rather than in prose:
``Status: Accepted`` in a PEP's RFC-822 header, ``* Status: **Implemented (Swift 5.5)**``
in a Markdown bullet header, ``- Capacity: 100 MW / 400 MWh`` on a project page,
``| Status | Final |`` in a definition table, ``<meta name="status" content="Draft">``,
or a field of a corpus record's own metadata. :func:`read_key_facts` understands:

1. RFC-822 header blocks: ``Key: value`` lines with indented continuation lines, at
   least two fields, ended by a blank line.
2. YAML front matter between ``---`` lines, and ``key: value`` blocks with no opening
   ``---`` that a ``---`` line closes (at least two fields, no blank line).

   Both are read by :mod:`core.headers` (PyYAML, :mod:`email.parser`); this module
   decides where such a block may stand and when it counts.
3. Markdown bullet headers (``* Key: value``, ``- Key: value``, ``* **Key:** value``)
   and bold-key lines (``**Status:** Final``); key-less bullets in the block are skipped.
4. Definition tables: a two-column Markdown table whose first column holds the keys.
5. HTML ``<meta name="..." content="...">`` tags.
6. The ``meta`` mapping of a corpus record (flat fields and a nested ``headers`` dict).

A header block must start at the top of the page: at its first non-blank line, after a
YAML front matter block, or after an H1 title line (``# Title``) and blank lines. A lone
``Status: Draft`` line (a status or stage field standing as its own paragraph) there
counts too. Only the first :data:`SCAN_CHARS` characters are read; everything is line and
regex based and linear in the size of the page head.

Each fact has a canonical ``key`` (casefolded, spaces and underscores -> ``-``) and a
``kind`` from the vocabulary below: ``status``, ``stage``, ``version``, ``milestone`` and
``date`` facts are *typed* (a change to one is a change to what the page declares);
everything else is ``other``. :func:`fact_changes` compares two pages' typed facts.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from core.headers import (
    FIELD,
    HeaderField,
    front_matter_end,
    is_delimiter,
    read_rfc822,
    read_yaml_fields,
)
from core.links import MD_LINK, link_text

FactKind = Literal["status", "stage", "version", "milestone", "date", "other"]
Layout = Literal[
    "rfc822", "front-matter", "closed-block", "bullets", "table", "field-line", "html-meta"
]

# --------------------------------------------------------------------------- vocabulary
#
# How a key's kind is found: a key is split into words at ``- : . /``; the words are read
# from the last (the head of the compound) to the first, and the first word that names a
# kind decides, so "status-date" is a date and "operational-status" a status. A head word
# from :data:`_NOT_FACT_HEADS` ("review-manager", "decision-notes") makes the key "other",
# and so does a word from :data:`_PAST_MODIFIERS` anywhere ("previous-versions").
# Whole keys in :data:`_WHOLE_KEYS` are decided before the words; keys in
# :data:`_HOUSEKEEPING_KEYS` are always "other", even when their value is a date.

_KIND_WORDS: tuple[tuple[FactKind, str], ...] = (
    ("status", r"status(?:es)?|state"),
    ("stage", r"stages?|phases?|maturity|lifecycle"),
    (
        "milestone",
        r"milestones?|deadlines?|expected\w*|eta|due|operation\w*|cod|completion|"
        r"commissioning|launch",
    ),
    (
        "date",
        r"dates?|dated|created|updated|accepted|published|effective|issued|adopted|enacted|"
        r"signed|released|expires|expiry|expiration",
    ),
    ("version", r"versions?|releases?|targets?"),
)
_WHOLE_KEYS: dict[str, FactKind] = {
    "target-date": "milestone",
    "go-live": "milestone",
    "in-service": "milestone",
    "resolution-status": "status",
}
_HOUSEKEEPING_KEYS = frozenset(
    {
        "post-history",
        "last-modified",
        "last-updated",
        "lastmod",
        "modified",
        "last-reviewed",
        "last-edited",
        "last-checked",
        "retrieved",
        "accessed",
        "fetched",
        "generated",
        "copyright",
        "resolution",
    }
)
_NOT_FACT_HEADS = frozenset(
    "manager managers notes note url urls link links author authors owner owners contact "
    "lead leads team delegate thread discussion discussions post posts history issue issues "
    "tracker page id number name names title description summary comment comments".split()
)
#: modifiers that make a key about the past, not the current state ("previous-versions")
_PAST_MODIFIERS = frozenset("previous prior former old original superseded".split())
#: corpus-record bookkeeping fields that are not facts about the page
_META_SKIP = frozenset(
    {
        "content",
        "content-sha1",
        "content-hash",
        "sha1",
        "sha256",
        "hash",
        "commit",
        "path",
        "url",
        "as-of",
        "fetched-at",
        "is-new",
        "changed",
        "changed-since-prev-year",
        "gone",
        "id",
        "number",
    }
)

#: only this many characters at the top of a page are read
SCAN_CHARS = 65_536
_MAX_HEAD_LINES = 600  # lines of the page head that are split off

__all__ = [
    "SCAN_CHARS",
    "FactKind",
    "HeaderBlock",
    "KeyFact",
    "Layout",
    "fact_changes",
    "fact_kind",
    "fact_map",
    "header_blocks",
    "header_fields",
    "join_fields",
    "normalise_value",
    "read_key_facts",
    "typed",
]


@dataclass(frozen=True)
class KeyFact:
    """One labelled value a page declares about itself."""

    key: str  #: canonical: casefolded, spaces/underscores -> '-', e.g. "status"
    label: str  #: the key as written, e.g. "Status"
    value: str  #: the value with markup removed, whitespace collapsed
    kind: FactKind
    raw: str  #: exact source text of the whole line/field in the content ("" for meta)
    start: int  #: offset of ``raw`` in the content (-1 for meta facts)


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


# --------------------------------------------------------------------------- keys and kinds

_KEY_SPLIT = re.compile(r"[-:./]+")
_KIND_WORD_RES = tuple((kind, re.compile(pat)) for kind, pat in _KIND_WORDS)
_KEY_MARKUP = re.compile(r"[*`]+")
_KEY_SPACE = re.compile(r"[\s_]+")
_RCS_KEYWORD = re.compile(r"^\$[A-Za-z]+(?::[^$]*)?\$$")  # "$Revision$", "$Date: ... $"
_kind_cache: dict[str, FactKind] = {}


def canonical_key(label: str) -> str:
    """``label`` as a canonical key: casefolded, markup dropped, spaces/underscores -> '-'."""
    key = _KEY_MARKUP.sub("", label).strip().strip(":").strip()
    return _KEY_SPACE.sub("-", key.casefold())


def _key_kind(key: str) -> FactKind:
    if key in _kind_cache:
        return _kind_cache[key]
    kind: FactKind = "other"
    if key in _WHOLE_KEYS:
        kind = _WHOLE_KEYS[key]
    elif key not in _HOUSEKEEPING_KEYS:
        words = [w for w in _KEY_SPLIT.split(key) if w]
        if _PAST_MODIFIERS.intersection(words):
            words = []
        for word in reversed(words):
            if word in _NOT_FACT_HEADS:
                break
            found = next((k for k, rx in _KIND_WORD_RES if rx.fullmatch(word)), None)
            if found is not None:
                kind = found
                break
    if len(_kind_cache) > 10_000:
        _kind_cache.clear()
    _kind_cache[key] = kind
    return kind


def fact_kind(key: str, value: str = "") -> FactKind:
    """The kind of a fact with canonical ``key`` and cleaned ``value``.

    By key (see the vocabulary at the top of this module); a key that names no kind is a
    ``date`` when its whole value is a date (housekeeping stamps such as
    ``post-history`` and ``last-modified`` stay ``other``). A version-control keyword
    placeholder (``$Revision$``) is never a typed value.
    """
    if _RCS_KEYWORD.match(value):
        return "other"
    kind = _key_kind(key)
    if kind == "other" and key not in _HOUSEKEEPING_KEYS and value and _WHOLE_DATE.match(value):
        return "date"
    return kind


def typed(fact: KeyFact) -> bool:
    """True for status, stage, version, milestone and date facts."""
    return fact.kind != "other"


# --------------------------------------------------------------------------- values

_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_WHOLE_DATE = re.compile(
    r"^(?:\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}[- ](?:" + _MONTHS + r")\.?[- ,]+\d{4}"
    r"|(?:" + _MONTHS + r")\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
    r"|(?:" + _MONTHS + r")\.?,? \d{4}"
    r"|(?:Q[1-4]|H[12]) ?\d{4}"
    r"|\d{1,2}/\d{1,2}/\d{2,4})$",
    re.IGNORECASE,
)
_MD_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<([^>`]*)>`_{1,2}")
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", re.S)
_STRONG_CODE = re.compile(r"\*\*|__|`+")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_WS = re.compile(r"\s+")


def _link_text(match: re.Match[str]) -> str:
    return match.group(1).strip() or match.group(2)


def clean_value(value: str) -> str:
    """``value`` with Markdown/rst/HTML markup removed and whitespace collapsed.

    ``**bold**``, ``*em*``, ```code```, ``[text](url)`` -> ``text``, ``\\`text <url>\\`_``
    -> ``text``, HTML tags and entities; a value quoted as a whole loses its quotes.
    """
    s = value
    if "[" in s:
        s = MD_LINK.sub(link_text, s)
        s = _MD_REF_LINK.sub(r"\1", s)
    if "`" in s:
        s = _RST_LINK.sub(_link_text, s)
    if "<" in s:
        s = _HTML_TAG.sub(" ", s)
    if "*" in s or "_" in s or "`" in s:
        s = _STRONG_CODE.sub("", s)
        s = _EMPHASIS.sub(r"\1", s)
        s = _UNDERSCORE_EMPHASIS.sub(r"\1", s)
    if "&" in s:
        s = html.unescape(s)
    s = _WS.sub(" ", s).strip()
    if s.endswith("\\"):  # Markdown hard line break
        s = s[:-1].rstrip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    return s


_MONTH_NUMBER = {
    m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())
}
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})[- ](" + _MONTHS + r")\.?[- ,]+(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b(" + _MONTHS + r")\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
# "Swift 3.0" is "Swift 3", "4.0.0" is "4"; "3.0.1" and "5.10" are left alone
_TRAILING_ZERO = re.compile(r"(?<=\d)(?:\.0)+(?![.\d])")
_EDGE_PUNCT = " \t.,;:!?()[]{}'\"-–—*_`"
# "Accepted (2021-03-16)" is "Accepted": a parenthesis that only dates the value
_DATE_PARENS = re.compile(r"\s*\((?:on |since |as of )?\d{4}-\d{2}-\d{2}\)")


def _iso(year: str, month: int, day: str) -> str:
    return f"{year}-{month:02d}-{int(day):02d}"


def normalise_value(value: str) -> str:
    """Comparison form of a fact value.

    Casefolded, markup and surrounding punctuation removed, whitespace collapsed, dates
    written as ISO (``1-Oct-2000`` = ``2000-10-01``), a parenthesis holding only a date
    dropped (``Accepted (2021-03-16)`` = ``Accepted``) and a trailing ``.0`` of a version
    number dropped (``Swift 3`` = ``Swift 3.0``).
    """
    s = clean_value(value).casefold()
    if any(c.isdigit() for c in s):
        s = _DAY_MONTH_YEAR.sub(lambda m: _iso(m[3], _MONTH_NUMBER[m[2][:3]], m[1]), s)
        s = _MONTH_DAY_YEAR.sub(lambda m: _iso(m[3], _MONTH_NUMBER[m[1][:3]], m[2]), s)
        s = _ISO_DATE.sub(lambda m: _iso(m[1], int(m[2]), m[3]), s)
        s = _DATE_PARENS.sub("", s)
        s = _TRAILING_ZERO.sub("", s)
    return s.strip(_EDGE_PUNCT)


# --------------------------------------------------------------------------- lines

_KEY = r"[A-Za-z_][\w.()/&'+-]*(?: [\w.()/&'+-]+){0,4}"  # a label, as core.headers reads it
_FIELD = FIELD
_BULLET_FIELD = re.compile(
    r"^[ ]{0,3}[*+-][ \t]+(?:\*\*(" + _KEY + r")(?::\*\*|\*\*[ \t]*:)"
    r"|__(" + _KEY + r")(?::__|__[ \t]*:)"
    r"|(" + _KEY + r")[ \t]*:)(?:[ \t]+(\S.*?)|)[ \t]*$"
)
_BOLD_FIELD = re.compile(
    r"^(?:\*\*(" + _KEY + r")(?::\*\*|\*\*[ \t]*:)|__(" + _KEY + r")(?::__|__[ \t]*:))"
    r"(?:[ \t]+(\S.*?)|)[ \t]*$"
)
_BULLET = re.compile(r"^[ ]{0,3}[*+-][ \t]+\S")
_ATX_H1 = re.compile(r"^[ ]{0,3}#[ \t]+\S")
_SETEXT_H1 = re.compile(r"^[ ]{0,3}=+[ \t]*$")
_TABLE_SEP = re.compile(r"^:?-{2,}:?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_TABLE_KEY = re.compile(r"^[A-Za-z][\w .()/&'+-]{0,40}$")
_HEADER_ROW_KEYS = frozenset(
    {"", "field", "fields", "key", "name", "property", "attribute", "item", "parameter", "value"}
)

_Line = tuple[int, str]  # (offset in the content, text without its line break)
_FIRST_LINES = 48  # lines split off first; most headers end well before


class _Lines(list[_Line]):
    """The first lines of a page head; ``truncated`` if the head has more lines."""

    truncated = False

    @property
    def texts(self) -> list[str]:
        """The lines' texts (what :mod:`core.headers` reads)."""
        cached: list[str] | None = self.__dict__.get("_texts")
        if cached is None or len(cached) != len(self):
            cached = self.__dict__["_texts"] = [text for _, text in self]
        return cached


def _texts(lines: list[_Line]) -> list[str]:
    return lines.texts if isinstance(lines, _Lines) else [text for _, text in lines]


class _NeedMoreLines(Exception):
    """A parser reached the end of a truncated line list: split more lines and retry."""


def _split_lines(text: str, limit: int) -> _Lines:
    parts = text.split("\n", limit)
    out = _Lines()
    if len(parts) > limit:
        parts.pop()  # the unsplit rest of the page
        out.truncated = True
    pos = 0
    for part in parts:
        line = part[:-1] if part.endswith("\r") else part
        out.append((pos, line))
        pos += len(part) + 1
    if out and out[0][1].startswith("\ufeff"):
        out[0] = (1, out[0][1][1:])
    return out


def _more(lines: list[_Line], i: int) -> bool:
    """True if line ``i`` exists; raises :class:`_NeedMoreLines` if it may exist unsplit."""
    if i < len(lines):
        return True
    if isinstance(lines, _Lines) and lines.truncated:
        raise _NeedMoreLines
    return False


def _blank(lines: list[_Line], i: int) -> bool:
    return not lines[i][1].strip()


def _skip_blank(lines: list[_Line], i: int) -> int:
    while _more(lines, i) and _blank(lines, i):
        i += 1
    return i


class _Builder:
    """Collects the fields of one block: label, value parts and the lines they span."""

    def __init__(self, content: str, lines: list[_Line]) -> None:
        self.content = content
        self.lines = lines
        self.fields: list[tuple[str, list[str], int, int]] = []  # label, parts, first, last

    def open(self, label: str, value: str | None, i: int) -> None:
        self.fields.append((label, [value] if value else [], i, i))

    def extend(self, part: str, i: int) -> None:
        label, parts, first, _ = self.fields[-1]
        if part:
            parts.append(part)
        self.fields[-1] = (label, parts, first, i)

    def add(self, fields: list[HeaderField]) -> None:
        """Fields read by :mod:`core.headers` (their values are final: one part each)."""
        for f in fields:
            self.fields.append((f.label, [f.value] if f.value else [], f.first, f.last))

    def facts(self) -> list[KeyFact]:
        out: list[KeyFact] = []
        for label, parts, first, last in self.fields:
            start = self.lines[first][0]
            end = self.lines[last][0] + len(self.lines[last][1])
            out.append(_fact(label, " ".join(parts), self.content[start:end], start))
        return out


def _fact(label: str, value: str, raw: str, start: int) -> KeyFact:
    label = _KEY_MARKUP.sub("", label).strip()
    key = canonical_key(label)
    text = clean_value(value)
    return KeyFact(key, label, text, fact_kind(key, text), raw, start)


def _block(layout: Layout, facts: list[KeyFact], lines: list[_Line], i: int, j: int) -> HeaderBlock:
    """A block over lines ``i`` to ``j - 1``."""
    end = lines[j - 1][0] + len(lines[j - 1][1])
    return HeaderBlock(layout, lines[i][0], end, tuple(facts))


def _enough(facts: list[KeyFact]) -> bool:
    """At least two fields, or one typed field."""
    return len(facts) >= 2 or any(f.kind != "other" for f in facts)


# --------------------------------------------------------------------------- layouts


def _front_matter(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """YAML front matter whose ``---`` is line ``i``; (block, index after it)."""
    texts = _texts(lines)
    j = front_matter_end(texts, i)
    if j is None:
        _more(lines, len(lines))  # the closing line may be further down
        return None, i + 1
    fields, _data, error = read_yaml_fields(texts, i + 1, j)
    if error is not None and not fields:
        return None, i + 1
    b = _Builder(content, lines)
    b.add(fields)
    return _block("front-matter", b.facts(), lines, i, j + 1), j + 1


def _closed_block(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """``key: value`` lines closed by a ``---`` line (no opening ``---``, no blank line)."""
    if not _FIELD.match(lines[i][1]):
        return None, i
    j = i + 1
    while _more(lines, j) and lines[j][1].strip() and not is_delimiter(lines[j][1]):
        j += 1
    if not _more(lines, j) or not is_delimiter(lines[j][1]):
        return None, i
    fields, _data, _error = read_yaml_fields(_texts(lines), i, j)
    if len(fields) < 2:
        return None, i
    b = _Builder(content, lines)
    b.add(fields)
    return _block("closed-block", b.facts(), lines, i, j + 1), j + 1


def _rfc822(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """An RFC-822 block from line ``i``: >= 2 fields, continuation lines, a blank line after."""
    fields, j = read_rfc822(_texts(lines), i)
    if j >= len(lines):
        _more(lines, j)  # the block may go on past the lines split off
    if len(fields) >= 2 and (not _more(lines, j) or _blank(lines, j)):
        b = _Builder(content, lines)
        b.add(fields)
        return _block("rfc822", b.facts(), lines, i, j), j
    return None, i


def _field_line(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A lone ``Status: Draft`` line standing as its own paragraph (status/stage keys only)."""
    m = _FIELD.match(lines[i][1])
    if not m or not m.group(2) or (_more(lines, i + 1) and not _blank(lines, i + 1)):
        return None, i
    b = _Builder(content, lines)
    b.add(read_rfc822(_texts(lines), i, i + 1)[0])
    facts = b.facts()
    if facts[0].kind not in ("status", "stage") or len(facts[0].value) > 80:
        return None, i
    return _block("field-line", facts, lines, i, i + 1), i + 1


def _bullets(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A Markdown bullet header (or bold-key lines) from line ``i``."""
    b = _Builder(content, lines)
    j = i
    in_item = False  # the previous item was keyed (continuation lines extend it)
    bold_only = True
    while _more(lines, j):
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
            and _more(lines, j + 1)
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


def _table(content: str, lines: list[_Line], i: int) -> tuple[HeaderBlock | None, int]:
    """A two-column definition table (``| Status | Final |``) from line ``i``."""
    rows: list[tuple[int, list[str]]] = []
    j = i
    while _more(lines, j) and lines[j][1].lstrip()[:1] == "|":
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
        facts.append(_fact(key, cells[1], content[start : start + len(lines[k][1])], start))
    if facts and _enough(facts):
        return _block("table", facts, lines, i, j), j
    return None, i


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
        facts.append(_fact(name.strip(), attrs["content"], m.group(0), m.start()))
    if not facts:
        return None
    last = facts[-1]
    return HeaderBlock("html-meta", facts[0].start, last.start + len(last.raw), tuple(facts))


def _looks_like_html(head: str) -> bool:
    top = head[:4096].lstrip("\ufeff \t\r\n")
    return top[:1] == "<" and "<meta" in head[:SCAN_CHARS].lower()


def _is_h1(lines: list[_Line], i: int) -> int:
    """Number of lines of an H1 title at line ``i`` (0 if none)."""
    if _ATX_H1.match(lines[i][1]):
        return 1
    if lines[i][1].strip() and _more(lines, i + 1) and _SETEXT_H1.match(lines[i + 1][1]):
        return 2
    return 0


def _body_header(content: str, lines: list[_Line], i: int) -> HeaderBlock | None:
    """The header block at body line ``i`` or right after an H1 title there."""
    for attempt in range(2):
        i = _skip_blank(lines, i)
        if not _more(lines, i):
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


# --------------------------------------------------------------------------- reading


def header_blocks(content: str) -> list[HeaderBlock]:
    """The blocks of key facts at the top of ``content``, in document order.

    At most: a YAML front matter (or a ``---``-closed ``key: value`` block), then one
    body header block (RFC-822, bullets, table or a lone status line), and HTML meta tags.
    """
    return list(_cached_blocks(content)) if content else []


@lru_cache(maxsize=8)
def _cached_blocks(content: str) -> tuple[HeaderBlock, ...]:
    # One change is read several times (sentences, reasons): the same string object
    # hits this cache at the cost of its (cached) hash.
    head = content[:SCAN_CHARS]
    try:
        return tuple(_parse(content, head, _split_lines(head, _FIRST_LINES)))
    except _NeedMoreLines:
        lines = _split_lines(head, _MAX_HEAD_LINES)
        lines.truncated = False  # a header does not run past this many lines
        return tuple(_parse(content, head, lines))


def _parse(content: str, head: str, lines: _Lines) -> list[HeaderBlock]:
    blocks: list[HeaderBlock] = []
    i = _skip_blank(lines, 0)
    if _more(lines, i):
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


def _meta_facts(meta: Mapping[str, Any]) -> list[KeyFact]:
    out: list[KeyFact] = []
    seen: set[str] = set()

    def add(label: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return
        key = canonical_key(label)
        if not key or key in seen or key in _META_SKIP:
            return
        if isinstance(value, int) and key.isalpha() and len(key) <= 4:
            return  # a document number ("pep": 8, "rfc": 822)
        seen.add(key)
        text = clean_value(str(value))
        out.append(KeyFact(key, label, text, fact_kind(key, text), "", -1))

    for label, value in meta.items():
        if label != "headers":
            add(str(label), value)
    headers = meta.get("headers")
    if isinstance(headers, Mapping):
        for label, value in headers.items():
            add(str(label), value)
    return out


def read_key_facts(content: str, meta: Mapping[str, Any] | None = None) -> list[KeyFact]:
    """The key facts ``content`` declares near its top, then those of ``meta``.

    Facts are in document order; a key may occur more than once (see :func:`fact_map`).
    Meta facts (``raw == ""``, ``start == -1``) are added only for keys the content does
    not declare: facts in the content win.
    """
    facts = [f for block in header_blocks(content) for f in block.facts]
    if meta:
        have = {f.key for f in facts}
        facts.extend(f for f in _meta_facts(meta) if f.key not in have)
    return facts


def fact_map(facts: Sequence[KeyFact]) -> dict[str, KeyFact]:
    """The first fact per key."""
    out: dict[str, KeyFact] = {}
    for f in facts:
        out.setdefault(f.key, f)
    return out


def fact_changes(old: Sequence[KeyFact], new: Sequence[KeyFact]) -> list[tuple[str, str, str]]:
    """(label, before, after) for every TYPED fact whose value differs.

    Compared by :func:`normalise_value` (casefold, markup and surrounding punctuation
    removed, ISO dates, a trailing ``.0`` of a version number ignored: ``Swift 3`` equals
    ``Swift 3.0``). A fact typed on either side counts. Added or removed typed facts use
    ``""`` for the missing side. Keys in the order of ``old``, then new keys.
    """
    a, b = fact_map(old), fact_map(new)
    out: list[tuple[str, str, str]] = []
    for key in list(a) + [k for k in b if k not in a]:
        fa, fb = a.get(key), b.get(key)
        if not any(f is not None and f.kind != "other" for f in (fa, fb)):
            continue
        before = fa.value if fa else ""
        after = fb.value if fb else ""
        if normalise_value(before) == normalise_value(after):
            continue
        out.append(((fb or fa).label, before, after))  # type: ignore[union-attr]
    return out


def join_fields(
    items: Sequence[tuple[str, str]], aliases: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``(label, value)`` pairs as a mapping of casefolded labels (through ``aliases``,
    old name -> current name) to values; a repeated label's values are joined with ``, ``."""
    out: dict[str, str] = {}
    for key, value in items:
        k = key.casefold()
        if aliases:
            k = aliases.get(k, k)
        out[k] = f"{out[k]}, {value}" if out.get(k) else value
    return out


def header_fields(text: str) -> dict[str, str]:
    """The key-fact fields at the top of ``text``: casefolded labels -> values.

    Built from :func:`read_key_facts`, so it understands every layout above: an RFC-822
    block (continuation lines unfolded), YAML front matter (a list's items joined with
    ``, ``) and ``---``-closed ``key: value`` blocks, Markdown bullet headers
    (``* Status: **Accepted**``), definition tables and HTML meta tags. Values have their
    markup removed; repeated labels are joined with ``, ``.
    """
    return join_fields([(f.label, f.value) for f in read_key_facts(text)])
