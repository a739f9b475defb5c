"""Passage changes: the material differences between two versions of one passage.

What a claim's check says changed in a passage it rests on, in plain words: a figure, a
date, a status word, a negation or a declared field's value ("Capacity: 100 MW → 160 MW",
"$142/kWh → $134/kWh", "“If adopted” dropped"); a passage rewritten as a whole is quoted.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.domain.declared_fields import canon_value, field_of, strip_markup
from core.domain.passages import normalise
from core.domain.text import clean_inline, stem

_DIFF_TOKEN = re.compile(r"[$€£¥]?\w+(?:[.,/:]\w+)*%?|[^\w\s]")
_URLISH = re.compile(r"(?:https?://|www\.)\S+|\]\([^)]*\)")
_STATUS_WORDS = frozenset(
    """proposed draft accepted approved final rejected withdrawn deferred superseded
    deprecated active provisional implemented implementable operational cancelled
    canceled suspended pending planned completed complete released retired obsolete
    construction development review returned postponed paused halted terminated
    expired revoked repealed adopted enacted effective signed vetoed awaiting""".split()
)
STATUS_STEMS = frozenset(stem(w) for w in _STATUS_WORDS)
_NEGATION = frozenset({"not", "no", "never", "without", "cannot", "nor"})
# what is planned or possible against what is: "would apply" → "applies" is news
_MODALS = frozenset({"would", "will", "could", "might", "may", "shall", "should"})


def _is_figure(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _material(words: Iterable[str]) -> bool:
    for w in words:
        lw = w.casefold()
        if _is_figure(w) or lw in _NEGATION or lw in _MODALS or lw in _STATUS_WORDS:
            return True
        if stem(lw) in STATUS_STEMS:
            return True
    return False


_EDGE_PUNCT = " \t,;:.-–—"


def _span_text(text: str, spans: list[tuple[int, int]], i1: int, i2: int) -> str:
    """The words of tokens ``i1:i2`` as the passage writes them ("mid-2026", not
    "mid - 2026"), without punctuation at the edges."""
    if i1 >= i2:
        return ""
    return " ".join(text[spans[i1][0] : spans[i2 - 1][1]].split()).strip(_EDGE_PUNCT)


@dataclass(frozen=True)
class Difference:
    """One material difference between two versions of a passage: the old words and the
    new ones as the passage writes them ("" for a side that has none). ``rewritten``: the
    passage was rewritten as a whole; ``new`` is then all of it."""

    old: str
    new: str
    rewritten: bool = False

    def __str__(self) -> str:
        if self.rewritten:
            return f"now reads “{_clip(self.new)}”"
        if self.old and self.new:
            return f"{self.old} → {self.new}"
        if self.old:
            return f"“{self.old}” dropped"
        if self.new:
            return f"now adds “{self.new}”"
        return "wording changed"


@dataclass
class _Stretch:
    """Tokens ``i1:i2`` of the old passage against ``j1:j2`` of the new one."""

    i1: int
    i2: int
    j1: int
    j2: int
    differs: bool  # a figure, status word or negation differs in it


def _stretches(ta: list[str], tb: list[str]) -> list[_Stretch]:
    """The two passages aligned on their wording with every figure masked: each replaced
    word run, and each run of adjacent figures at aligned places ("Q4 2025"), in order."""
    mask_a = ["#" if _is_figure(t) else t.casefold() for t in ta]
    mask_b = ["#" if _is_figure(t) else t.casefold() for t in tb]
    matcher = difflib.SequenceMatcher(None, mask_a, mask_b, autojunk=False)
    out: list[_Stretch] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            material = _material(ta[i1:i2]) or _material(tb[j1:j2])
            out.append(_Stretch(i1, i2, j1, j2, material))
            continue
        k = 0
        while k < i2 - i1:
            if not _is_figure(ta[i1 + k]):
                k += 1
                continue
            n = k
            while n < i2 - i1 and _is_figure(ta[i1 + n]):
                n += 1
            differs = any(canon_value(ta[i1 + m]) != canon_value(tb[j1 + m]) for m in range(k, n))
            out.append(_Stretch(i1 + k, i1 + n, j1 + k, j1 + n, differs))
            k = n
    return out


def _joined(stretches: list[_Stretch]) -> list[_Stretch]:
    """Differing stretches, each merged with the stretches right after it (no word in
    between on either side), so "in October 2025 → on 18 June 2026" is one difference and
    a date keeps its unchanged year ("by mid-2026 → on 18 June 2026")."""
    out: list[_Stretch] = []
    for st in stretches:
        last = out[-1] if out else None
        if last is not None and last.differs and last.i2 == st.i1 and last.j2 == st.j1:
            last.i2, last.j2 = st.i2, st.j2
        else:
            out.append(_Stretch(st.i1, st.i2, st.j1, st.j2, st.differs))
    return [st for st in out if st.differs]


def passage_differences(old: str, new: str) -> list[str]:
    """Material differences between two versions of a passage, in reading order, said in
    plain words (see :func:`passage_changes`): "Capacity: 100 MW → 160 MW",
    "$142/kWh → $134/kWh", "“If adopted” dropped"."""
    return list(dict.fromkeys(str(d) for d in passage_changes(old, new)))


def passage_changes(old: str, new: str) -> list[Difference]:
    """Material differences between two versions of a passage, in reading order.

    A declared field ("Status: Proposed" → "Status: Approved") differs when its value
    does. Otherwise the two passages are aligned on their wording with every figure
    masked, so figures are paired by position ("$142/kWh → $134/kWh", "Q4 2025 → Q1
    2026"), never as sets; replaced word runs count when they hold a figure, a status
    word or a negation, and each is said with the words right after it that changed too,
    as the passage writes them. A passage rewritten as a whole (its wording matches less
    than :data:`REWRITTEN_BELOW`) is one difference quoting the new passage. Link targets
    and URLs are not content.
    """
    a = _URLISH.sub(" ", clean_inline(old))
    b = _URLISH.sub(" ", clean_inline(new))
    fa, fb = field_of(a), field_of(b)
    if fa and fb:
        va, vb = strip_markup(fa[1]), strip_markup(fb[1])
        if canon_value(va) == canon_value(vb):
            return []
        if normalise(fa[0]) == normalise(fb[0]):
            return [Difference(f"{fa[0]}: {va}", vb)]
        return [Difference(f"{fa[0]}: {va}", f"{fb[0]}: {vb}")]
    ma, mb = list(_DIFF_TOKEN.finditer(a)), list(_DIFF_TOKEN.finditer(b))
    ta, tb = [m.group(0) for m in ma], [m.group(0) for m in mb]
    sa, sb = [m.span() for m in ma], [m.span() for m in mb]
    out = [
        Difference(_span_text(a, sa, st.i1, st.i2), _span_text(b, sb, st.j1, st.j2))
        for st in _joined(_stretches(ta, tb))
    ]
    if len(out) > 1 and _likeness(ta, tb) < REWRITTEN_BELOW:
        # fragments of a rewritten sentence say little: quote what it says now
        return [Difference(" ".join(a.split()), " ".join(b.split()), rewritten=True)]
    return out


#: passages whose wording (figures masked) matches less than this are said as rewritten
REWRITTEN_BELOW = 0.5


def _likeness(ta: list[str], tb: list[str]) -> float:
    mask_a = ["#" if _is_figure(t) else t.casefold() for t in ta]
    mask_b = ["#" if _is_figure(t) else t.casefold() for t in tb]
    return difflib.SequenceMatcher(None, mask_a, mask_b, autojunk=False).ratio()


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
