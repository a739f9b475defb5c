"""Reference-list entries: ``[3] [Title](https://…) — fetched 2026-01-15``.

One reader of a report's reference entries for every module that meets them: the report
parser (:mod:`core.domain.report_parse`, any Markdown an analyst imports) and the PDF renderer
(:mod:`core.domain.pdf`, which anchors each entry so citations can link to it). The citation
markers that point at these entries are :mod:`core.domain.citations`' grammar.

An entry starts with its number — ``[3]``, ``[^3]``, ``[3]:`` (explicit) or ``3.`` /
``3)`` (an ordinal) — optionally after a bullet and up to three spaces of indentation;
the rest of the line is its text, and indented lines after it continue it. A bullet
holding a web address is an entry without a number. The text holds a Markdown link
(:mod:`core.domain.links`) or a bare address, a title, and optionally ``fetched`` / ``accessed`` /
``retrieved`` and a ``YYYY-MM-DD`` date.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.domain.links import HTTP, INLINE_LINK, unangle, unescape_link_text
from core.domain.untrusted import strip_controls

__all__ = ["EntryStart", "entry_number", "entry_start", "parse_entry_text", "read_entries"]

_ENTRY = re.compile(
    r"^\s{0,3}(?:[-*+][ \t]+)?"
    r"(?:\[\^?(?P<bracket>\d{1,6})\]:?[ \t]*|(?P<ordinal>\d{1,6})[.)](?:[ \t]+|$))"
    r"(?P<rest>.*)$"
)
_BULLET = re.compile(r"^\s{0,3}[-*+][ \t]+(?P<rest>.*)$")
_FETCHED = re.compile(
    r"(?i)\b(?:fetched|accessed|retrieved)(?:\s+on)?\s*:?\s*(\d{4}-\d{2}-\d{2})\b"
)
_BARE_URL = re.compile(r"<(https?://[^\s<>]+)>|https?://[^\s<>]+", re.I)
_TITLE_STRIP = " \t.,;:-–—|\"'“”‘’"
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class EntryStart:
    """The first line of an entry: its number, whether it was bracketed, and its text."""

    number: int
    explicit: bool  #: ``[n]`` (or ``[^n]``, ``[n]:``), not an ordinal ``n.``
    rest: str


def entry_start(line: str) -> EntryStart | None:
    """The entry ``line`` starts, if it starts one with a number."""
    m = _ENTRY.match(line)
    if m is None:
        return None
    explicit = m.group("bracket") is not None
    return EntryStart(int(m.group("bracket") or m.group("ordinal")), explicit, m.group("rest"))


def entry_number(text: str) -> int | None:
    """The number of the bracketed entry (``[n] …``) ``text`` starts, if any: what a
    citation ``[n]`` links to."""
    start = entry_start(text)
    return start.number if start is not None and start.explicit else None


def read_entries(lines: Sequence[str]) -> list[tuple[int | None, bool, str]] | None:
    """The entries of a reference list, as ``(number, explicit, text)`` (a bullet holding
    an address has no number; continuation lines are joined to the text), or None when
    at most half of the non-blank lines belong to an entry."""
    entries: list[tuple[int | None, bool, list[str]]] = []
    entry_lines = nonblank = 0
    previous_was_entry = False
    for line in lines:
        if not line.strip():
            previous_was_entry = False
            continue
        nonblank += 1
        start = entry_start(line)
        if start is not None:
            entries.append((start.number, start.explicit, [start.rest]))
        else:
            b = _BULLET.match(line)
            if b and HTTP.search(b.group("rest")):
                entries.append((None, False, [b.group("rest")]))
            elif previous_was_entry and line[:1] in (" ", "\t"):
                entries[-1][2].append(line.strip())
            else:
                previous_was_entry = False
                continue
        entry_lines += 1
        previous_was_entry = True
    if not entries or entry_lines * 2 <= nonblank:
        return None
    return [(number, explicit, " ".join(texts)) for number, explicit, texts in entries]


def _one_line(text: str) -> str:
    return _WS.sub(" ", strip_controls(text)).strip()


def _trim_url(url: str) -> str:
    while url:
        last = url[-1]
        if last in ".,;:!?'\"]}*_" or (last == ")" and url.count("(") < url.count(")")):
            url = url[:-1]
        else:
            break
    return url


def parse_entry_text(rest: str) -> tuple[str, str, str | None]:
    """(url, title, fetched) from the text of a reference entry after its number.

    The address is the first Markdown link's destination (its text, or its title, is the
    title), else the first bare ``http(s)`` address (trailing punctuation left out); the
    title is then what remains. ``fetched`` is the date after ``fetched`` / ``accessed`` /
    ``retrieved``. A title never stays empty: the address stands in for it."""
    fetched = None
    m = _FETCHED.search(rest)
    if m:
        fetched = m.group(1)
        rest = rest[: m.start()] + rest[m.end() :]
    link = INLINE_LINK.search(rest)
    if link and link.group("url"):
        url = unangle(link.group("url"))
        title = _one_line(unescape_link_text(link.group("text")))
        if not title and link.group("title"):
            title = _one_line(link.group("title")[1:-1])
        return url, title or url, fetched
    url = ""
    bare = _BARE_URL.search(rest)
    if bare:
        if bare.group(1):
            url, start, end = bare.group(1), bare.start(), bare.end()
        else:
            url = _trim_url(bare.group())
            start, end = bare.start(), bare.start() + len(url)
        rest = rest[:start] + " " + rest[end:]
    rest = re.sub(r"\(\s*[,;.]?\s*\)|\[\s*\]|<\s*>", " ", rest)
    title = _one_line(unescape_link_text(rest)).strip(_TITLE_STRIP)
    return url, title or url, fetched
