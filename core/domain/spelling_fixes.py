"""Spelling fixes: a word that merely fixes a typo is no material edit.

:func:`undo_typo_fixes` puts back the old spelling of words an edit only corrected
("accpetance" -> "acceptance"), so that the material tokens of the two sentences are
compared as written; a change between two different status, decision or lifecycle
words ("implementable" -> "implemented") is never a spelling fix.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

from core.domain.material_tokens import material_tokens

__all__ = ["undo_typo_fixes"]

# Lifecycle vocabulary beyond the decision words (stems): a typo rule must not merge
# two of these ("implementable" -> "implemented", "provisional" -> "proposed").
_LIFECYCLE_WORD = re.compile(
    r"(?:accept|approv|final|reject|deprecat|supersed|withdr|defer|draft|provision|activ|"
    r"postpon|cancel|operat|propos|suspend|repeal|delay|obsolet|abandon|retir|implement|"
    r"releas|complet|resolv|review|plann|schedul|construct|commission|pending|experiment|"
    r"stabl|preview|sunset|discontinu|ratif|adopt|enact|publish|announc|revok|revoc|expir|"
    r"deploy|launch|pilot|submit|enforc)\w*"
)
_WORD = re.compile(r"[^\W\d_]{4,}")

_SUFFIXES = sorted(
    "ations ation ables able ibles ible ments ment ances ance ences ence ings ing ions ion "
    "ally ers er ed es al ly s e".split(),
    key=len,
    reverse=True,
)


def _stem(word: str) -> tuple[str, str]:
    """(stem, ending) of a casefolded word: ``implementable`` -> (``implement``, ``able``)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)], suffix
    return word, ""


def _one_slip(a: str, b: str) -> bool:
    """True if ``a`` and ``b`` differ by at most one added, dropped, replaced or swapped letter."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        if a[i + 1 :] == b[i + 1 :]:
            return True  # one letter replaced
        return i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]


def _is_spelling_fix(old_word: str, new_word: str) -> bool:
    """True if ``new_word`` (casefolded) fixes a misspelling of ``old_word``, not another word.

    Ordinary words close by ``fuzz.ratio`` are spelling fixes. When either word is a
    status/decision/lifecycle word, the two must be the same word up to one slip:
    the same stem with endings one letter apart ("acceptence" -> "acceptance"), or
    stems one letter or one transposition apart with the same ending ("accpetance"
    -> "acceptance"). Two forms of a stem ("implementable" -> "implemented",
    "accepted" -> "acceptable") or two different words ("provisional" ->
    "proposed") are real edits.
    """
    old_tokens = material_tokens(old_word)
    new_tokens = material_tokens(new_word)
    if old_tokens and old_tokens != new_tokens:
        return False  # a different decision word
    if old_tokens and old_tokens == new_tokens:
        return True  # same decision word either way: nothing changes
    if not new_tokens and not (
        _LIFECYCLE_WORD.fullmatch(old_word) or _LIFECYCLE_WORD.fullmatch(new_word)
    ):
        return True
    if old_word[:1] != new_word[:1]:
        return False
    old_stem, old_end = _stem(old_word)
    new_stem, new_end = _stem(new_word)
    if old_stem == new_stem:
        return _one_slip(old_end, new_end) and _one_slip(old_word, new_word)
    return old_end == new_end and _one_slip(old_stem, new_stem)


def undo_typo_fixes(before: str, after: str) -> str:
    """``after`` with words that merely fix a typo of a ``before`` word put back.

    A word that is new in ``after`` and within ``fuzz.ratio`` >= 80 of a word
    that disappeared from ``before`` is a spelling fix ("accpetance" ->
    "acceptance") if :func:`_is_spelling_fix` agrees: a change between two
    different status/decision/lifecycle words ("implementable" -> "implemented")
    is never one.
    """
    wb = {w.casefold() for w in _WORD.findall(before)}
    wa = {w.casefold() for w in _WORD.findall(after)}
    gone = sorted(wb - wa)
    new = sorted(wa - wb)
    if not gone or not new:
        return after
    mapping: dict[str, str] = {}
    for w in new:
        best = process.extractOne(w, gone, scorer=fuzz.ratio, processor=None, score_cutoff=80)
        if best is None:
            continue
        if _is_spelling_fix(best[0], w):
            mapping[w] = best[0]
    if not mapping:
        return after
    return _WORD.sub(lambda m: mapping.get(m.group(0).casefold(), m.group(0)), after)
