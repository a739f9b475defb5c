"""Text normalizations shared by the report's Markdown renderer and parser.

The block parser both use, and the line and text helpers that keep a heading, a title
or a body the same when it is rendered and parsed again.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

# Block-level parsing only: inline parsing is not needed (we work on raw lines) and is
# the expensive part on large documents.
MD = MarkdownIt("commonmark").disable("inline")

# C0/C1 controls except \t and \n, and the invisible characters that can make a heading
# or title read differently from what it says (bidi overrides and isolates, ZWSP, LRM/RLM)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]")
WS = re.compile(r"\s+")


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def heading_text(text: str) -> str:
    """One-line heading text that survives ``#`` rendering and parsing unchanged.

    Control characters are removed, newlines become spaces, the ends are stripped, and
    a trailing run of '#' that Markdown would read as a closing sequence is escaped.
    """
    text = _CONTROL.sub("", text).replace("\n", " ").strip()
    m = re.search(r"#+$", text)
    if m and (m.start() == 0 or text[m.start() - 1] in " \t"):
        text = text[: m.start()] + "\\" + text[m.start() :]
    return text


def one_line(text: str) -> str:
    """Control characters removed, whitespace runs collapsed to one space, stripped."""
    return WS.sub(" ", _CONTROL.sub("", text)).strip()


def is_blank(line: str) -> bool:
    return not line.strip()


def strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and is_blank(lines[start]):
        start += 1
    while end > start and is_blank(lines[end - 1]):
        end -= 1
    return lines[start:end]
