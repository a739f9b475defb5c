"""Untrusted text — model output, fetched pages, imported bodies — made inert as Markdown.

``clean_markdown`` keeps a text's visible words and drops every construct that could
make a reader's browser (the app, a Markdown viewer, a PDF) fetch or run something:

* links (inline, with a title, reference-style ``[t][y]`` / ``[t][]`` / ``[y]``, spanning
  lines) become their text; a link whose text is a citation (``[1](u)``) becomes ``[1]``;
* images (``![alt](u)``, ``![alt][y]``) become their alt text;
* autolinks ``<http://…>`` become the plain address (no ``<>``);
* link reference definitions (``[y]: url``) are removed;
* raw HTML (inline tags and HTML blocks) is escaped (``<`` → ``&lt;``), so it shows as text;
* bidi override and isolate characters (U+202A–U+202E, U+2066–U+2069) and NUL are removed.

The project's own ``[n]`` citation markers survive: with every definition gone, ``[1]``
is plain text. Code spans and code blocks are left alone (nothing in them renders).

How: markdown-it-py (CommonMark + tables, raw HTML on, every link scheme accepted: its
default refuses ``javascript:`` links, which other readers do render) parses the text,
with its link, image, autolink and HTML rules wrapped to record where each construct
starts and ends;
the constructs are rewritten in the source, outermost first, and the text is parsed again
until nothing is left (``[[a](b)](c)`` needs two passes). Anything that cannot be placed
back in the source, or a text that does not settle, has every ``[``, ``]`` and ``<`` on
the affected lines escaped instead — inert, if less pretty.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline

from core.domain.citations import is_citation_text

__all__ = [
    "BIDI_CONTROLS",
    "clean_line",
    "clean_markdown",
    "escape_all",
    "strip_bidi",
    "strip_controls",
]

#: Bidi embeddings/overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# C0/C1 controls except \t and \n, bidi controls, ZWSP and LRM/RLM: what a one-line text
# (a heading, a title) loses; the same set ``core.domain.report_parse`` removes from headings.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NEWLINES = re.compile(r"\r\n?")
_MAX_PASSES = 12


def strip_bidi(text: str) -> str:
    """``text`` without bidi override / isolate characters."""
    return BIDI_CONTROLS.sub("", text)


def strip_controls(text: str) -> str:
    """``text`` without control, bidi and zero-width characters (tabs and newlines kept)."""
    return _CONTROLS.sub("", text)


def escape_all(text: str) -> str:
    """Every ``[``, ``]`` and ``<`` made literal: no link, image, autolink or tag can
    start anywhere in the result (the fallback of ``clean_markdown``)."""
    return text.replace("[", "\\[").replace("]", "\\]").replace("<", "&lt;")


# -- the recording parser ---------------------------------------------------------------
@dataclass(frozen=True)
class _Span:
    """A construct found by the inline parser, in offsets of its inline token's content."""

    token: int
    start: int
    end: int
    kind: str  # link | image | autolink | html_inline
    keep: tuple[int, int]  # the part shown as text (for html_inline: unused)


def _label_end(state: StateInline, at: int, nested: bool) -> int:
    return state.md.helpers.parseLinkLabel(state, at, not nested)


def _recording(kind: str, rule: Callable[[StateInline, bool], bool]) -> Callable[..., bool]:
    def wrapped(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not rule(state, silent):
            return False
        if not silent:
            end = state.pos
            if kind == "link":
                keep = (start + 1, _label_end(state, start, nested=False))
            elif kind == "image":
                keep = (start + 2, _label_end(state, start + 1, nested=True))
            else:
                keep = (start + 1, end - 1)
            state.pos = end
            spans: list[_Span] = state.env["eg_spans"]
            spans.append(_Span(state.env["eg_token"], start, end, kind, keep))
        return True

    return wrapped


def _inline_indexed(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule, telling the inline rules which token they parse."""
    for index, token in enumerate(state.tokens):
        if token.type == "inline":
            state.env["eg_token"] = index
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _wrap_rule(md: MarkdownIt, name: str) -> None:
    for rule in md.inline.ruler.__rules__:
        if rule.name == name:
            md.inline.ruler.at(name, _recording(name, rule.fn), {"alt": list(rule.alt)})
            return
    raise LookupError(name)  # pragma: no cover - markdown-it renamed a rule


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "inline_definitions": True}).enable("table")
    md.validateLink = lambda url: True  # a javascript: link is a link to other readers
    for name in ("link", "image", "autolink", "html_inline"):
        _wrap_rule(md, name)
    md.core.ruler.at("inline", _inline_indexed)
    return md


_MD = _parser()


# -- placing what the parser found back in the source ------------------------------------
class _Source:
    """The text being cleaned, as lines with absolute offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1
        self.cursor: dict[int, int] = {}  # per line: where the next table cell may start

    def locate(self, first_line: int, content: str) -> list[int] | None:
        """Absolute offset of each line of an inline token's ``content`` (whose first line
        is source line ``first_line``), or None when a line cannot be found verbatim."""
        found: list[int] = []
        for i, part in enumerate(content.split("\n")):
            n = first_line + i
            if n >= len(self.lines):
                return None
            line, cursor = self.lines[n], self.cursor.get(n, 0)
            trimmed = line.rstrip()
            if line.endswith(part) and len(line) - len(part) >= cursor:
                col = len(line) - len(part)
            elif trimmed.endswith(part) and len(trimmed) - len(part) >= cursor:
                col = len(trimmed) - len(part)
            else:
                col = line.find(part, cursor)
            if col < 0:
                return None
            self.cursor[n] = col + len(part)
            found.append(self.starts[n] + col)
        return found


def _absolute(content: str, line_offsets: list[int]) -> Callable[[int], int]:
    starts = [0]
    for i, ch in enumerate(content):
        if ch == "\n":
            starts.append(i + 1)

    def to_abs(pos: int) -> int:
        k = bisect_right(starts, pos) - 1
        return line_offsets[k] + pos - starts[k]

    return to_abs


def _replacement(span: _Span, src: _Source, to_abs: Callable[[int], int]) -> str:
    if span.kind == "html_inline":
        return "&lt;" + src.text[to_abs(span.start) + 1 : to_abs(span.end - 1) + 1]
    kept = src.text[to_abs(span.keep[0]) : to_abs(span.keep[1])]
    if span.kind == "link" and is_citation_text(kept):
        return f"[{kept.strip()}]"
    return kept


def _edits(text: str) -> tuple[list[tuple[int, int, str]], set[int]]:
    """(start, end, replacement) edits of one pass, and the lines to escape wholesale."""
    env: dict[str, Any] = {"eg_spans": [], "eg_token": -1}
    tokens = _MD.parse(text, env)
    src = _Source(text)
    edits: list[tuple[int, int, str]] = []
    fallback: set[int] = set()
    by_token: dict[int, list[_Span]] = {}
    for span in env["eg_spans"]:
        by_token.setdefault(span.token, []).append(span)
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        a, b = token.map
        if token.type == "definition":
            edits.append((src.starts[a], src.starts[b] if b < len(src.lines) else len(text), ""))
        elif token.type == "html_block":
            col = src.lines[a].find("<")
            if col < 0:
                fallback.update(range(a, b))
            else:
                edits.append((src.starts[a] + col, src.starts[a] + col + 1, "&lt;"))
        elif token.type == "inline" and index in by_token:
            offsets = src.locate(a, token.content)
            if offsets is None:
                fallback.update(range(a, b))
                continue
            to_abs = _absolute(token.content, offsets)
            for span in by_token[index]:
                edits.append(
                    (to_abs(span.start), to_abs(span.end), _replacement(span, src, to_abs))
                )
    return edits, fallback


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply the outermost of possibly nested edits (inner ones wait for the next pass)."""
    pieces: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        if start < pos:
            continue
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _escape_lines(text: str, numbers: set[int]) -> str:
    lines = text.split("\n")
    for n in numbers:
        if n < len(lines):
            lines[n] = escape_all(lines[n])
    return "\n".join(lines)


def clean_markdown(text: str) -> str:
    """``text`` with no link, image, autolink, link reference definition or raw HTML left,
    their visible text kept (see the module docstring). Newlines are normalized to ``\\n``;
    idempotent."""
    text = strip_bidi(_NEWLINES.sub("\n", text or "").replace("\x00", ""))
    for _ in range(_MAX_PASSES):
        edits, fallback = _edits(text)
        if not edits and not fallback:
            return text
        text = _escape_lines(_apply(text, edits), fallback)
    return escape_all(text)  # did not settle: nothing may stay live


def clean_line(text: str) -> str:
    """A one-line text (a title, a heading) with no control characters and nothing live:
    cleaned as the content of a Markdown heading, the place it is rendered."""
    flat = " ".join(strip_controls(text or "").split())
    cleaned = clean_markdown("# " + flat)
    return cleaned[2:] if cleaned.startswith("# ") and "\n" not in cleaned else escape_all(flat)
