"""The ``[n]`` citation grammar: which brackets of a Markdown text cite sources, and which.

A citation is a bracketed group of source markers: ``[3]``, ``[1, 2]``, ``[1; 2]``, a range
``[1-3]`` / ``[1–3]`` (hyphen or en dash), or a mix ``[2, 4-6]``; ``[1][2]`` is two. Ranges
are expanded (``[1-3]`` cites 1, 2 and 3); marker 0, a descending range and a range longer
than ``MAX_RANGE`` name nothing, and a group that names nothing is not a citation (it is
text). Markers hold at most six digits.

What is *not* a citation is decided by markdown-it's inline parser, the one the project
renders with: the grammar is an inline rule placed after ``link``, so

* link text and inline links — ``[1](https://…)``, ``[see [1]](…)`` — are links;
* reference links ``[a][1]`` and ``[1]`` itself when the text defines ``[1]: url`` are links;
* ``![1](x.png)`` and ``![1]`` are images (or an image's start);
* code spans, fenced and indented code blocks are code;
* an escaped ``\\[1]`` is a bracket.

Everything that reads or writes citations goes through this module: :func:`find_citations`
(spans and markers), :func:`cited_markers`, :func:`strip_citations`,
:func:`rewrite_citations`, :func:`renumber_citations`, :func:`format_citation`; the
renderers install the same rule (:func:`install`) and turn its ``citation`` tokens into
links. ``GROUP`` is the written form alone, for composing other patterns (a sentence
that ends with its citations); it knows nothing of links or code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline

__all__ = [
    "GROUP",
    "MAX_RANGE",
    "Citation",
    "cited_markers",
    "closed_code_spans",
    "find_citations",
    "format_citation",
    "install",
    "is_citation_text",
    "marker_numbers",
    "numbers_written",
    "renumber_citations",
    "rewrite_citations",
    "strip_citations",
]

MAX_RANGE = 500  # a range naming more markers than this names none ("[1-100000]")

_ITEM = r"\d{1,6}(?:\s*[-–]\s*\d{1,6})?"
_BODY = rf"{_ITEM}(?:\s*[,;]\s*{_ITEM})*"
#: the written form of one citation group (no look at links, code or escapes)
GROUP = rf"\[{_BODY}\]"
_GROUP_AT = re.compile(rf"\[({_BODY})\]")
_BODY_ONLY = re.compile(_BODY)
_LIST_SEP = re.compile(r"\s*[,;]\s*")
_RANGE_SEP = re.compile(r"\s*[-–]\s*")
_NUMBER = re.compile(r"\d+")
_CANDIDATE = re.compile(r"\[\d")
# lines that may hold code (a fence, an indented block) or a link definition: only then is
# the text parsed as blocks before its inline runs are read
_MAYBE_BLOCKS = re.compile(r"`|~~~|^(?: {4}|\t)|\]:", re.M)


@dataclass(frozen=True)
class Citation:
    """One citation group of a text: ``text[start:end]`` is the group as written."""

    start: int
    end: int
    markers: tuple[int, ...]  # as written, ranges expanded, repeats dropped


def marker_numbers(body: str) -> tuple[int, ...]:
    """The markers the inside of a group names (``"1, 3-5"`` → 1, 3, 4, 5): ranges expanded,
    repeats, 0, descending and over-long ranges dropped."""
    out: dict[int, None] = {}
    for part in _LIST_SEP.split(body.strip()):
        ends = _RANGE_SEP.split(part)
        lo, hi = int(ends[0]), int(ends[-1])
        if lo <= hi and hi - lo <= MAX_RANGE:
            out.update((n, None) for n in range(max(lo, 1), hi + 1))
    return tuple(out)


def is_citation_text(text: str) -> bool:
    """Is ``text`` what may stand between a citation's brackets ("1, 2", "3-5") and name a
    marker? (A link whose text is that is a citation written as a link.)"""
    text = text.strip()
    return _BODY_ONLY.fullmatch(text) is not None and bool(marker_numbers(text))


def numbers_written(group: str) -> list[tuple[int, int, int]]:
    """(start, end, n) of each number written in a citation group (``"[1-3]"``: 1 and 3),
    for a renderer that links each of them."""
    return [(m.start(), m.end(), int(m.group())) for m in _NUMBER.finditer(group)]


def format_citation(markers: Iterable[int]) -> str:
    """``[1, 2]``: the group the project writes for ``markers`` (in their order)."""
    return "[" + ", ".join(str(n) for n in markers) + "]"


# -- the inline rule ---------------------------------------------------------------------
def _citation_rule(state: StateInline, silent: bool) -> bool:
    """markdown-it inline rule: a citation group at ``state.pos`` becomes a ``citation``
    token (``meta["markers"]``, ``meta["start"]`` / ``["end"]`` in ``state.src``).

    Placed after ``link``, so links and reference links have had their turn. It never
    matches while a link's label is scanned (``silent``) or tokenized (``linkLevel``), so
    link text stays link text and link labels nest exactly as without this rule."""
    pos = state.pos
    if silent or state.linkLevel > 0 or state.src[pos] != "[":
        return False
    if pos > 0 and state.src[pos - 1] == "!":  # "![1]": an image's start, not a citation
        return False
    m = _GROUP_AT.match(state.src, pos, state.posMax)
    if m is None:
        return False
    markers = marker_numbers(m.group(1))
    if not markers:
        return False
    token = state.push("citation", "", 0)
    token.content = m.group(0)
    token.meta = {"markers": markers, "start": pos, "end": m.end()}
    state.pos = m.end()
    return True


def _render_as_text(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    return escapeHtml(tokens[idx].content)


def install(md: MarkdownIt) -> MarkdownIt:
    """Teach ``md`` the citation grammar: its inline parser then yields ``citation`` tokens
    (rendered as their text unless a renderer rule or a core rule says otherwise)."""
    names = [rule.name for rule in md.inline.ruler.__rules__]
    if "citation" not in names:
        md.inline.ruler.after("link", "citation", _citation_rule)
        md.add_render_rule("citation", _render_as_text)
    return md


_MD = install(MarkdownIt("commonmark", {"html": False}).enable("table"))
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable("table")
_BLOCKS.core.ruler.disable(["inline", "text_join"])  # blocks and link definitions only


# -- reading a text ----------------------------------------------------------------------
def _code_lines(text: str, env: dict[str, Any]) -> bytearray:
    """1 for each line inside a fenced or indented code block; fills ``env`` with the
    text's link definitions."""
    lines = text.count("\n") + 1
    flags = bytearray(lines)
    for token in _BLOCKS.parse(text, env):
        if token.map is not None and token.type in ("fence", "code_block"):
            a, b = token.map
            flags[a:b] = b"\x01" * (b - a)
    return flags


def _runs(text: str, code: bytearray | None) -> Iterable[tuple[int, int]]:
    """(start, end) offsets of the runs of consecutive non-blank lines outside code: no
    inline construct spans a blank line or leaves a code block."""
    pos, start = 0, -1
    for i, line in enumerate(text.split("\n")):
        end = pos + len(line)
        inside = bool(code and code[i]) or not line.strip()
        if inside and start >= 0:
            yield start, pos - 1
            start = -1
        elif not inside and start < 0:
            start = pos
        pos = end + 1
    if start >= 0:
        yield start, len(text)


@lru_cache(maxsize=8192)
def find_citations(text: str) -> tuple[Citation, ...]:
    """The citations of ``text`` in order, with their spans (offsets in ``text``)."""
    if not _CANDIDATE.search(text):
        return ()
    # same length, one line per line: "\r\n" → " \n", a lone "\r" → "\n"
    flat = text.replace("\r\n", " \n").replace("\r", "\n")
    env: dict[str, Any] = {}
    code = _code_lines(flat, env) if _MAYBE_BLOCKS.search(flat) else None
    found: list[Citation] = []
    for a, b in _runs(flat, code):
        run = flat[a:b]
        if not _CANDIDATE.search(run):
            continue
        for token in _MD.inline.parse(run, _MD, env, []):
            if token.type == "citation":
                start, end = token.meta["start"], token.meta["end"]
                found.append(Citation(a + start, a + end, token.meta["markers"]))
    return tuple(found)


def cited_markers(text: str) -> list[int]:
    """The markers ``text`` cites, in order of first citation, each once."""
    seen: dict[int, None] = {}
    for citation in find_citations(text):
        seen.update(dict.fromkeys(citation.markers))
    return list(seen)


def rewrite_citations(text: str, replace: Callable[[Citation], str | None]) -> str:
    """``text`` with each citation replaced by ``replace(citation)`` (None: kept as it is).

    A citation replaced by ``""`` takes one blank (space or tab) before it along, unless
    a citation that stays follows it directly ("a [9][1]" less 9 is "a [1]")."""
    found = find_citations(text)
    if not found:
        return text
    new_texts = [replace(citation) for citation in found]
    pieces: list[str] = []
    pos = 0
    for k, (citation, new) in enumerate(zip(found, new_texts, strict=True)):
        if new is None:
            continue
        start = citation.start
        kept_next = (
            k + 1 < len(found) and found[k + 1].start == citation.end and new_texts[k + 1] != ""
        )
        if not new and not kept_next and start > pos and text[start - 1] in " \t":
            start -= 1
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = citation.end
    pieces.append(text[pos:])
    return "".join(pieces)


def strip_citations(text: str) -> str:
    """``text`` without its citations, whitespace collapsed ("Sea level rose [1, 2]." →
    "Sea level rose.")."""
    return " ".join(rewrite_citations(text, lambda _c: "").split())


def renumber_citations(text: str, numbers: Mapping[int, int]) -> str:
    """``text`` with each citation's markers mapped through ``numbers`` (a marker it lacks
    stays) and written sorted as ``[1, 2]``; everything else is left byte for byte."""
    if not numbers:
        return text

    def renumber(citation: Citation) -> str:
        mapped = sorted(dict.fromkeys(numbers.get(n, n) for n in citation.markers))
        return format_citation(mapped)

    return rewrite_citations(text, renumber)


#: where a cited sentence ends: its citation groups and its full stop
_CITED_END = re.compile(rf"(?:{GROUP})+[.!?]?(?=\s|$)")
_TICKS = re.compile(r"`+")


def closed_code_spans(text: str) -> str:
    """``text`` with each sentence's stray backticks dropped. A sentence quoted from inside
    a code span ("MaxInt`), which is an artificial limitation [8].") opens one that the
    next backtick closes, sentences later: everything between, citations included, is
    code to the renderer and to the citation grammar, so those sentences would cite
    nothing a reader can follow or an update re-checks. Each stretch up to a sentence's
    citations is read on its own: a backtick run no run of the same length closes is
    dropped. Fenced code is left alone."""
    out = []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")) or "`" not in line:
            out.append(line)
            continue
        pieces, pos = [], 0
        for m in _CITED_END.finditer(line):
            pieces.append(_balanced(line[pos : m.end()]))
            pos = m.end()
        pieces.append(_balanced(line[pos:]))
        out.append("".join(pieces))
    return "\n".join(out)


def _balanced(chunk: str) -> str:
    """``chunk`` without the backtick run that opens a code span nothing closes."""
    opening: re.Match[str] | None = None
    for run in _TICKS.finditer(chunk):
        if opening is None:
            opening = run
        elif len(run.group()) == len(opening.group()):
            opening = None
    if opening is None:
        return chunk
    return chunk[: opening.start()] + chunk[opening.end() :]
