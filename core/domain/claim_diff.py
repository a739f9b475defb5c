"""The claim diff: which sentences of a page changed between two versions.

Sentences (claim units, :func:`core.domain.page_units.split_sentences`) are aligned on a
normalised form, so markup, link style, case and whitespace edits vanish; inside each
replaced block they are paired by best ``fuzz.ratio`` into ``modified`` claims, the rest
are ``added`` or ``removed``, and a sentence that only moved is no change.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz import fuzz, process

from core.domain.links import MD_LINK, link_text
from core.domain.page_units import split_sentences

ClaimKind = Literal["modified", "added", "removed"]

#: minimum ``fuzz.ratio`` for an old and a new sentence to count as one modified claim
PAIR_MIN_RATIO = 60.0
#: replaced blocks larger than this (old x new sentences) are paired within a band
_MAX_PAIR_CELLS = 250_000
_WS = re.compile(r"\s+")

__all__ = ["PAIR_MIN_RATIO", "RST_LINK", "ClaimChange", "ClaimKind", "claim_diff", "normalise"]


@dataclass
class ClaimChange:
    """One changed claim: ``modified`` (both sides), ``added`` or ``removed``."""

    before: str | None
    after: str | None

    @property
    def kind(self) -> ClaimKind:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "modified"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimChange:
        return cls(before=data.get("before"), after=data.get("after"))


_ROLE = re.compile(r":[\w-]+(?::[\w-]+)?:(?=`)")
#: an rst link (or interpreted text holding a target): ```text <target>`_``
RST_LINK = re.compile(r"`((?:\s*+[^`<\s])*+)\s*<([^>`]*)>`_{0,2}")  # linear: no backtracking
_NORM_DROP = re.compile(r"[`*_<>\\]")
_NEEDS_NORM = re.compile(r"[`*_<>\\]|\]\(|- ")
_HYPHEN_BREAK = re.compile(r"(\w)- (\w)")  # "comma- delimited": a line-wrap artefact


def _rst_link_text(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


def normalise(sentence: str) -> str:
    """Comparison key: casefolded, links collapsed to their text, markup and extra space removed."""
    if not _NEEDS_NORM.search(sentence):  # fast path: plain prose
        s = _WS.sub(" ", sentence).strip()
        return (s[:-1] if s.endswith("::") else s).casefold()
    s = _ROLE.sub("", sentence)
    s = RST_LINK.sub(_rst_link_text, s)
    if "](" in s:  # every link holds one
        s = MD_LINK.sub(link_text, s)
    s = _NORM_DROP.sub("", s)
    s = _HYPHEN_BREAK.sub(r"\1-\2", s)
    s = _WS.sub(" ", s).strip()
    if s.endswith("::"):  # rst literal-block marker
        s = s[:-1]
    return s.casefold()


def _pair_block(old_keys: list[str], new_keys: list[str]) -> list[tuple[int | None, int | None]]:
    """Pair the sentences of one replaced block by best ``fuzz.ratio`` >= PAIR_MIN_RATIO.

    Greedy, best score first, each sentence used once. Returns ``(i, j)`` pairs
    (indexes into the block) in document order, with ``None`` for an unpaired
    side. Very large blocks are compared within a diagonal band only.
    """
    n_old, n_new = len(old_keys), len(new_keys)
    candidates: list[tuple[float, int, int]] = []
    if n_old and n_new:
        band = None
        if n_old * n_new > _MAX_PAIR_CELLS:
            band = max(25, _MAX_PAIR_CELLS // (2 * n_old))
        for i, key in enumerate(old_keys):
            lo, hi = 0, n_new
            if band is not None:
                centre = i * n_new // n_old
                lo, hi = max(0, centre - band), min(n_new, centre + band + 1)
            for _, score, j in process.extract(
                key,
                new_keys[lo:hi],
                scorer=fuzz.ratio,
                processor=None,
                score_cutoff=PAIR_MIN_RATIO,
                limit=None,
            ):
                candidates.append((-score, i, lo + j))
    candidates.sort()
    pairs: dict[int, int] = {}
    used_new: set[int] = set()
    for _, i, j in candidates:
        if i not in pairs and j not in used_new:
            pairs[i] = j
            used_new.add(j)

    out: list[tuple[int | None, int | None]] = []
    j_next = 0
    for i in range(n_old):
        if i in pairs:
            j = pairs[i]
            for k in range(j_next, j):  # new sentences before this pair's partner
                if k not in used_new:
                    out.append((None, k))
            out.append((i, j))
            j_next = max(j_next, j + 1)
        else:
            out.append((i, None))
    out.extend((None, k) for k in range(j_next, n_new) if k not in used_new)
    return out


def _claim_diff_all(old: str, new: str) -> list[ClaimChange]:
    a = split_sentences(old)
    b = split_sentences(new)
    keys: dict[str, str] = {}  # most sentences occur on both sides: normalise each once
    ak = [keys[s] if s in keys else keys.setdefault(s, normalise(s)) for s in a]
    bk = [keys[s] if s in keys else keys.setdefault(s, normalise(s)) for s in b]
    matcher = difflib.SequenceMatcher(None, ak, bk, autojunk=False)
    changes: list[ClaimChange] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "delete":
            changes.extend(ClaimChange(a[i], None) for i in range(i1, i2))
        elif tag == "insert":
            changes.extend(ClaimChange(None, b[j]) for j in range(j1, j2))
        else:
            for i, j in _pair_block(ak[i1:i2], bk[j1:j2]):
                before = a[i1 + i] if i is not None else None
                after = b[j1 + j] if j is not None else None
                if before is not None and after is not None and ak[i1 + i] == bk[j1 + j]:
                    continue
                changes.append(ClaimChange(before, after))
    # A sentence that was only moved is not a change: cancel removed/added pairs
    # with the same normalised text.
    removed = Counter(normalise(c.before) for c in changes if c.kind == "removed")
    added = Counter(normalise(c.after) for c in changes if c.kind == "added")
    moved = removed & added
    if moved:
        drop_removed = moved.copy()
        drop_added = moved.copy()
        kept: list[ClaimChange] = []
        for c in changes:
            if c.kind == "removed" and drop_removed[normalise(c.before)] > 0:
                drop_removed[normalise(c.before)] -= 1
                continue
            if c.kind == "added" and drop_added[normalise(c.after)] > 0:
                drop_added[normalise(c.after)] -= 1
                continue
            kept.append(c)
        changes = kept
    return changes


def claim_diff(old: str, new: str, limit: int | None = None) -> list[ClaimChange]:
    """Sentence-level diff of ``old`` and ``new``.

    Sentences are aligned with :class:`difflib.SequenceMatcher` on their
    normalised form (so markup/link/case/whitespace-only edits vanish); inside
    each replaced block, sentences are paired by best ``fuzz.ratio`` >= 60 as
    ``modified`` and the rest are ``added``/``removed``. Sentences that merely
    moved are dropped. At most ``limit`` changes are returned (default ``None``: all,
    so no truncation hides a claim).
    """
    changes = _claim_diff_all(old, new)
    return changes if limit is None else changes[:limit]
