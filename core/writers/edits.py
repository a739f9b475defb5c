"""A revision's reply as edits to the section: each names a sentence as it stands and
what replaces it (nothing, to remove it), plus a paragraph to add at the end.

A model asked to return a whole revised section types it all out again — as many output
tokens as writing it, for a section where one date changed — and may alter, in passing,
sentences it was told to keep. As edits, the reply holds only what changes, and every
sentence it does not name stays byte for byte. An edit whose sentence is not in the
section, or is only part of a sentence there, is refused (its message goes into the
repair round): nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.writers.replies import InvalidReply, SentenceEdit

#: a stop, then any closing quotes or brackets, at the end of a text
_STOP_END = r"[.!?][\"')\]”’»]*$"


def apply_edits(body: str, edits: Sequence[SentenceEdit], add: str = "") -> str:
    """``body`` with each edit applied (every copy of its ``old`` sentence, wherever its
    lines wrap, replaced by ``new``; an empty ``new`` removes it) and ``add`` appended as a
    paragraph of its own. Raises InvalidReply naming an ``old`` the section does not hold."""
    seen: set[str] = set()
    for n, edit in enumerate(edits, 1):
        old, new = " ".join(edit.old.split()), " ".join(edit.new.split())
        if not old or old in seen or old == new:
            continue  # nothing to find, a repeat of an edit already made, or no change
        seen.add(old)
        pattern = re.compile(r"\s+".join(re.escape(w) for w in old.split()))
        found = _whole_sentences(body, pattern)
        if not found:
            raise InvalidReply(
                f'edit {n}: "old" is not a sentence of the section as it stands ({_short(old)}); '
                "copy each whole sentence you change exactly, its [n] citations included"
            )
        body = splice(body, found, new) if new else _no_empty_paragraph(splice(body, found, ""))
    added = add.strip()
    if added:
        body = f"{body.rstrip()}\n\n{added}" if body.strip() else added
    return body


def _whole_sentences(body: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans where ``pattern`` matches whole sentences of ``body`` (one or several):
    it starts where a sentence may (the start of a line, or after a stop and a space) and
    ends on a stop (closing quotes and brackets aside). A fragment ("400 MWh") would
    change every sentence that holds it, whatever that sentence cites."""
    return [m.span() for m in pattern.finditer(body) if _starts(body, m.start()) and _ends(body, m)]


def _starts(body: str, at: int) -> bool:
    before = body[:at]
    if not before.strip(" \t") or before.endswith("\n"):
        return True
    return before[-1].isspace() and re.search(_STOP_END, before.rstrip()) is not None


def _ends(body: str, m: re.Match[str]) -> bool:
    after = body[m.end() : m.end() + 1]
    return (not after or after.isspace()) and re.search(_STOP_END, m.group(0)) is not None


def splice(body: str, spans: Sequence[tuple[int, int]], new: str) -> str:
    """``body`` with each of ``spans`` (in order, not overlapping) replaced by ``new``; an
    empty ``new`` takes one space beside the span with it."""
    for start, end in reversed(spans):
        if not new:
            if body[end : end + 1] == " ":
                end += 1
            elif body[start - 1 : start] == " ":
                start -= 1
        body = body[:start] + new + body[end:]
    return body


def _no_empty_paragraph(body: str) -> str:
    """``body`` without the paragraphs a removal left empty (and their blank lines)."""
    paragraphs = re.split(r"\n[ \t]*\n", body)
    if all(p.strip() for p in paragraphs):
        return body
    return "\n\n".join(p for p in paragraphs if p.strip())


def _short(text: str, limit: int = 80) -> str:
    return f'"{text}"' if len(text) <= limit else f'"{text[: limit - 1]}…"'
