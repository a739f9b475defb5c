"""Links to citation markers: while a Markdown report is parsed, its http(s) links and
link reference definitions become ``[n]`` markers and entries of the reference list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.domain.links import HTTP, LINK_TITLE, LINKISH, unangle, unescape_link_text
from core.domain.markdown_text import WS, is_blank, one_line
from core.domain.report_state import RefEntry

_MARKER_LIKE = re.compile(r"\s*\^?\[?\s*\d{1,6}\s*\]?\s*")


# --------------------------------------------------------------------------- code spans


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


# --------------------------------------------------------------------------- definitions

_DEF_START = re.compile(r"^ {0,3}\[")
_DEFINITION = re.compile(
    rf"^ {{0,3}}\[(?P<label>(?:\\.|[^\[\]\\])+)\]:\s*(?P<url><[^<>\n]*>|\S+)"
    rf"(?:\s+(?P<title>{LINK_TITLE}))?\s*$",
    re.S,
)


def _normalize_label(label: str) -> str:
    return WS.sub(" ", label.strip()).casefold()


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
        if covered[i] or is_blank(line):
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
                title=one_line(title[1:-1]) if title else "",
                lines=group,
            )
        )
    return found


# --------------------------------------------------------------------------- citations


class Citations:
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
            if skip[i] or is_blank(lines[i]):
                out.append(lines[i])
                i += 1
                continue
            j = i
            while j < n and not skip[j] and not is_blank(lines[j]):
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
        plain = "" if marker_like else one_line(unescape_link_text(text))
        marker: int | None = None
        if m.group("url") is not None or m.group(0).endswith(")"):
            url = unangle(m.group("url") or "")
            if not HTTP.match(url):
                return None
            link_title = m.group("title")
            title = plain or (one_line(link_title[1:-1]) if link_title else "") or url
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


def definition_citations(
    lines: list[str], covered: bytearray, references: list[RefEntry], n: int
) -> tuple[Citations, bytearray]:
    """Link reference definitions (top level, outside a parsed reference list): a numeric
    one becomes that reference and its lines go; the others serve reference links."""
    removed = bytearray(n)
    labels: dict[str, _Definition] = {}
    citations = Citations(references, labels)
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
