"""The head of a page as lines, split on demand, and the builder of a block's key facts.

Most header blocks end within the first few dozen lines, so only that many lines are split
off first (:func:`split_lines`); a parser that reaches the end of a truncated split asks
for more (:class:`NeedMoreLines`). :class:`FieldBuilder` turns the fields a parser found into
:class:`~core.domain.key_fact.KeyFact` records with their exact source text.
"""

from __future__ import annotations

from core.domain.headers import HeaderField
from core.domain.key_fact import KeyFact, make_fact

__all__ = [
    "FieldBuilder",
    "HeadLines",
    "Line",
    "NeedMoreLines",
    "has_line",
    "is_blank",
    "line_texts",
    "skip_blank",
    "split_lines",
]

Line = tuple[int, str]  # (offset in the content, text without its line break)


class HeadLines(list[Line]):
    """The first lines of a page head; ``truncated`` if the head has more lines."""

    truncated = False

    @property
    def texts(self) -> list[str]:
        """The lines' texts (what :mod:`core.domain.headers` reads)."""
        cached: list[str] | None = self.__dict__.get("_texts")
        if cached is None or len(cached) != len(self):
            cached = self.__dict__["_texts"] = [text for _, text in self]
        return cached


def line_texts(lines: list[Line]) -> list[str]:
    """The texts of ``lines``."""
    return lines.texts if isinstance(lines, HeadLines) else [text for _, text in lines]


class NeedMoreLines(Exception):
    """A parser reached the end of a truncated line list: split more lines and retry."""


def split_lines(text: str, limit: int) -> HeadLines:
    """The first ``limit`` lines of ``text`` with their offsets (a leading BOM dropped)."""
    parts = text.split("\n", limit)
    out = HeadLines()
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


def has_line(lines: list[Line], i: int) -> bool:
    """True if line ``i`` exists; raises :class:`NeedMoreLines` if it may exist unsplit."""
    if i < len(lines):
        return True
    if isinstance(lines, HeadLines) and lines.truncated:
        raise NeedMoreLines
    return False


def is_blank(lines: list[Line], i: int) -> bool:
    """True if line ``i`` is blank."""
    return not lines[i][1].strip()


def skip_blank(lines: list[Line], i: int) -> int:
    """The first non-blank line from ``i`` on (or the end)."""
    while has_line(lines, i) and is_blank(lines, i):
        i += 1
    return i


class FieldBuilder:
    """Collects the fields of one block: label, value parts and the lines they span."""

    def __init__(self, content: str, lines: list[Line]) -> None:
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
        """Fields read by :mod:`core.domain.headers` (their values are final: one part each)."""
        for f in fields:
            self.fields.append((f.label, [f.value] if f.value else [], f.first, f.last))

    def facts(self) -> list[KeyFact]:
        out: list[KeyFact] = []
        for label, parts, first, last in self.fields:
            start = self.lines[first][0]
            end = self.lines[last][0] + len(self.lines[last][1])
            out.append(make_fact(label, " ".join(parts), self.content[start:end], start))
        return out
