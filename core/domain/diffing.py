"""Word-level diffs of two texts, rendered as escaped HTML.

Texts are tokenised into words, runs of whitespace and single punctuation
marks; each distinct token is mapped to one private-use Unicode character so
that diff-match-patch (a character differ) diffs *tokens*. The result is
mapped back and cleaned up semantically, which keeps the output readable
("replaced this phrase" rather than letter soup) and fast on 20 KB texts.

Every piece of text that reaches HTML goes through :func:`html.escape`, so
source content can never inject markup into the app.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from diff_match_patch import diff_match_patch

DiffOpKind = Literal["equal", "insert", "delete"]

__all__ = [
    "DIFF_CSS",
    "DIFF_TIMEOUT",
    "DiffOp",
    "diff_stats",
    "inline_html",
    "sentence_spans",
    "side_by_side_html",
    "word_diff",
]

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
#: texts shorter than this (both together) are diffed by words in one go
_LINE_MODE_MIN_CHARS = 4000
#: seconds diff-match-patch may spend on one diff before settling for a coarser
#: (still exact: it round-trips) result; only reached on huge, heavily edited texts
DIFF_TIMEOUT = 2.0
_WORDLIKE = re.compile(r"\w+")
_OPS: dict[int, DiffOpKind] = {
    diff_match_patch.DIFF_EQUAL: "equal",
    diff_match_patch.DIFF_INSERT: "insert",
    diff_match_patch.DIFF_DELETE: "delete",
}

# Private-use code points to stand for tokens: the BMP area first, then the
# supplementary planes A and B (~137k distinct tokens in all).
_PUA_RANGES = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_PUA_CAPACITY = sum(hi - lo + 1 for lo, hi in _PUA_RANGES)


def _code_point(index: int) -> str:
    for lo, hi in _PUA_RANGES:
        size = hi - lo + 1
        if index < size:
            return chr(lo + index)
        index -= size
    raise ValueError("too many distinct tokens to diff")  # pragma: no cover - > 137k tokens


@dataclass(frozen=True)
class DiffOp:
    """One run of a diff: text that is in both sides, only in new, or only in old."""

    op: DiffOpKind
    text: str


def _encode(tokens: list[str], table: dict[str, str], chunks: list[str]) -> str:
    out = []
    for tok in tokens:
        ch = table.get(tok)
        if ch is None:
            ch = _code_point(len(chunks))
            table[tok] = ch
            chunks.append(tok)
        out.append(ch)
    return "".join(out)


def _decode(encoded: str, chunks_by_char: dict[str, str]) -> str:
    return "".join(chunks_by_char[c] for c in encoded)


def _token_diff(old: str, new: str) -> list[tuple[DiffOpKind, str]]:
    """Token-level diff of two (sub)texts, semantically cleaned up."""
    # Semantic cleanup merges trivial equalities (a lone space between two edits)
    # into the edits, so changes read as whole phrases. It runs on the encoded
    # tokens, so every op still starts and ends on a token boundary.
    return _symbol_diff(_TOKEN, old, new, semantic=True)


def _line_diff(old: str, new: str) -> list[tuple[DiffOpKind, str]]:
    """Line-level diff (each distinct line is one symbol): cheap and exact on equal lines."""
    return _symbol_diff(_LINE, old, new, semantic=False)


def _symbol_diff(
    pattern: re.Pattern[str], old: str, new: str, *, semantic: bool
) -> list[tuple[DiffOpKind, str]]:
    """diff-match-patch over symbols: each distinct ``pattern`` match (a token, a line) is
    encoded as one character, diffed, and decoded back."""
    table: dict[str, str] = {}
    chunks: list[str] = []
    a = _encode(pattern.findall(old), table, chunks)
    b = _encode(pattern.findall(new), table, chunks)
    by_char = {ch: symbol for symbol, ch in table.items()}
    dmp = diff_match_patch()
    dmp.Diff_Timeout = DIFF_TIMEOUT
    diffs = dmp.diff_main(a, b, False)
    if semantic:
        dmp.diff_cleanupSemantic(diffs)
    return [(_OPS[op], _decode(enc, by_char)) for op, enc in diffs if enc]


def word_diff(old: str, new: str) -> list[DiffOp]:
    """Diff ``old`` and ``new`` word by word.

    Concatenating the ``equal`` and ``delete`` texts gives back ``old``;
    ``equal`` and ``insert`` give back ``new``. Identical texts give a single
    ``equal`` op (none for two empty texts). Adjacent ops never share a kind.

    Long texts are first diffed by lines; only the replaced line blocks are then
    diffed by words, which keeps heavily edited 100 KB pages fast.
    """
    if old == new:
        return [DiffOp("equal", old)] if old else []
    pieces: list[tuple[DiffOpKind, str]] = []
    if len(old) + len(new) <= _LINE_MODE_MIN_CHARS or "\n" not in old + new:
        pieces = _token_diff(old, new)
    else:
        deleted: list[str] = []
        inserted: list[str] = []

        def flush() -> None:
            if deleted and inserted:
                pieces.extend(_token_diff("".join(deleted), "".join(inserted)))
            elif deleted:
                pieces.append(("delete", "".join(deleted)))
            elif inserted:
                pieces.append(("insert", "".join(inserted)))
            deleted.clear()
            inserted.clear()

        for kind, text in _line_diff(old, new):
            if kind == "delete":
                deleted.append(text)
            elif kind == "insert":
                inserted.append(text)
            else:
                flush()
                pieces.append((kind, text))
        flush()

    ops: list[DiffOp] = []
    for kind, text in pieces:
        if not text:
            continue
        if ops and ops[-1].op == kind:
            ops[-1] = DiffOp(kind, ops[-1].text + text)
        else:
            ops.append(DiffOp(kind, text))
    return ops


def _escape(text: str) -> str:
    return html.escape(text, quote=True).replace("\r\n", "\n").replace("\n", "<br>")


def inline_html(ops: list[DiffOp]) -> str:
    """Render ``ops`` as one running text.

    Deletions become ``<del class="eg-del">``, insertions ``<ins class="eg-ins">``;
    every chunk is HTML-escaped and newlines become ``<br>``.
    """
    parts: list[str] = []
    for d in ops:
        text = _escape(d.text)
        if d.op == "delete":
            parts.append(f'<del class="eg-del">{text}</del>')
        elif d.op == "insert":
            parts.append(f'<ins class="eg-ins">{text}</ins>')
        else:
            parts.append(text)
    return "".join(parts)


def sentence_spans(text: str, sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Where each of ``sentences`` stands in ``text`` (spacing may differ), as sorted,
    merged (start, end) character ranges; a sentence not found is skipped."""
    spans: list[tuple[int, int]] = []
    for sentence in sentences:
        words = sentence.split()
        if not words:
            continue
        m = re.search(r"\s+".join(re.escape(w) for w in words), text)
        if m is not None:
            spans.append(m.span())
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _marked(text: str, at: int, spans: list[tuple[int, int]]) -> str:
    """``text`` (which starts at offset ``at`` of the old text) escaped, with the parts
    inside ``spans`` wrapped in ``<mark class="eg-hl">``."""
    out: list[str] = []
    pos, end = at, at + len(text)
    for start, stop in spans:
        if stop <= pos or start >= end:
            continue
        if start > pos:
            out.append(_escape(text[pos - at : start - at]))
        lo, hi = max(start, pos), min(stop, end)
        out.append(f'<mark class="eg-hl">{_escape(text[lo - at : hi - at])}</mark>')
        pos = hi
    if pos < end:
        out.append(_escape(text[pos - at :]))
    return "".join(out)


def side_by_side_html(old: str, new: str, highlight: Sequence[str] = ()) -> str:
    """A two-column ``<table class="eg-diff">``: old with deletions, new with insertions.

    ``highlight``: sentences of ``old`` to mark in the Before column (``<mark
    class="eg-hl">``), e.g. the report sentences whose claims changed. All text is
    HTML-escaped; newlines become ``<br>``.
    """
    ops = word_diff(old, new)
    spans = sentence_spans(old, highlight) if highlight else []
    left: list[str] = []
    right: list[str] = []
    at = 0  # offset of the op in the old text
    for d in ops:
        if d.op == "insert":
            right.append(f'<ins class="eg-ins">{_escape(d.text)}</ins>')
            continue
        before = _marked(d.text, at, spans) if spans else _escape(d.text)
        at += len(d.text)
        if d.op == "equal":
            left.append(before)
            right.append(_escape(d.text))
        else:
            left.append(f'<del class="eg-del">{before}</del>')
    return (
        '<table class="eg-diff">'
        "<thead><tr><th>Before</th><th>After</th></tr></thead>"
        "<tbody><tr>"
        f'<td class="eg-old">{"".join(left)}</td>'
        f'<td class="eg-new">{"".join(right)}</td>'
        "</tr></tbody></table>"
    )


_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")


def _table_and_rest(text: str) -> tuple[list[str], list[list[str]], str] | None:
    """(header cells, body rows as cells, the text after the table) of a text that opens
    with a Markdown table, else None."""
    lines = text.strip("\n").split("\n")
    rows: list[list[str]] = []
    at = 0
    while at < len(lines) and (m := _TABLE_ROW.match(lines[at])):
        rows.append([c.strip() for c in m.group(1).split("|")])
        at += 1
    if len(rows) < 2 or not all(_RULE_CELL.match(c) for c in rows[1]):
        return None
    return rows[0], rows[2:], "\n".join(lines[at:]).strip("\n")


def _side(d: DiffOp, op: str, tag: str) -> str:
    """One side's piece of a cell diff: equal text as it is, ``op``'s text marked."""
    text = _escape(d.text)
    return text if d.op != op else f'<{tag} class="eg-{tag}">{text}</{tag}>'


def table_diff_html(old: str, new: str) -> str | None:
    """A section that is a Markdown table (a report's key facts) diffed row by row — each
    row keyed by its first cell, its other cells before and after, a changed cell's words
    marked — rather than as pipes and dashes; what follows the table, word by word below
    it. None when either text does not open with a table."""
    before, after = _table_and_rest(old), _table_and_rest(new)
    if before is None or after is None:
        return None
    head = after[0]
    old_rows = {r[0]: r[1:] for r in before[1] if r}
    new_rows = {r[0]: r[1:] for r in after[1] if r}
    order = [r[0] for r in after[1] if r] + [k for k in old_rows if k not in new_rows]
    body: list[str] = []
    for key in dict.fromkeys(order):
        was, now = old_rows.get(key), new_rows.get(key)
        if was is None:
            left, right = "", f'<ins class="eg-ins">{_escape(" · ".join(now or []))}</ins>'
        elif now is None:
            left, right = f'<del class="eg-del">{_escape(" · ".join(was))}</del>', ""
        else:
            ops = word_diff(" · ".join(was), " · ".join(now))
            left = "".join(_side(d, "delete", "del") for d in ops if d.op != "insert")
            right = "".join(_side(d, "insert", "ins") for d in ops if d.op != "delete")
        body.append(f"<tr><td>{_escape(key)}</td><td>{left}</td><td>{right}</td></tr>")
    name = _escape(head[0]) if head else "Item"
    html = (
        '<table class="eg-diff">'
        f"<thead><tr><th>{name}</th><th>Before</th><th>After</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )
    if before[2] or after[2]:
        html += side_by_side_html(before[2], after[2])
    return html


def diff_stats(ops: list[DiffOp]) -> dict[str, int]:
    """Number of words (``\\w+`` runs) inserted, deleted and unchanged."""
    stats = {"words_inserted": 0, "words_deleted": 0, "words_equal": 0}
    key = {"insert": "words_inserted", "delete": "words_deleted", "equal": "words_equal"}
    for d in ops:
        stats[key[d.op]] += len(_WORDLIKE.findall(d.text))
    return stats


DIFF_CSS = """
.eg-del { background: #fde8e8; color: #9b1c1c; text-decoration: line-through; }
.eg-ins { background: #e6f6ea; color: #14532d; text-decoration: none; }
table.eg-diff { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.eg-diff th, table.eg-diff td {
  border: 1px solid #d0d7de; padding: 0.4em 0.6em; vertical-align: top; text-align: left;
}
table.eg-diff td { white-space: pre-wrap; overflow-wrap: anywhere; }
table.eg-diff th { background: #f6f8fa; font-weight: 600; }
mark.eg-hl { background: #fff3bf; color: inherit; border-radius: 0.15em; }
""".strip()
