"""Material edits: which changes of a page matter even when it stays almost the same.

A small edit can be *material* — a status, a number, a date, a version, a decision word,
a header field — while the page's similarity stays above the gate. :func:`material_reasons`
says why a change is material (an empty list: it is not): changed key facts and header
fields (:mod:`core.domain.header_changes`), then the material tokens
(:mod:`core.domain.material_tokens`: dates, versions, numbers, status and decision words)
that changed claims (:mod:`core.domain.claim_diff`) gained or lost once spelling fixes are undone
(:mod:`core.domain.spelling_fixes`), each shown next to its replacement, and a large enough
volume of new or dropped prose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.domain.claim_diff import ClaimChange, claim_diff
from core.domain.claim_words import plain_unit
from core.domain.header_blocks import header_blocks
from core.domain.header_changes import header_units, key_fact_reasons
from core.domain.material_tokens import (
    Token,
    cancel_spelled_figures,
    is_weak,
    material_tokens,
    prose_words,
)
from core.domain.passage_changes import passage_changes
from core.domain.spelling_fixes import undo_typo_fixes
from core.domain.text import clean_inline

#: at most this many reasons are returned (the rest are summarised in one line)
MAX_REASONS = 40
#: this many net new (or dropped) words of prose make a change material by volume
MATERIAL_PROSE_WORDS = 150

__all__ = ["MATERIAL_PROSE_WORDS", "MAX_REASONS", "material_reasons"]

# Bibliography entries and link targets: citations, not claims.
_REF_ENTRY = re.compile(r"^\s*(?:\.\.\s+(?:\[[^\]]+\]|_)|\[[\w#*-]+\]\s)")


def _format_reason(category: str, removed: list[str], added: list[str]) -> str:
    """A reason for tokens no word alignment could place: what went and what came."""
    if category == "decision":
        removed, added = [f"“{t}”" for t in removed], [f"“{t}”" for t in added]
    if removed and added:
        return f"{', '.join(removed)} → {', '.join(added)}"
    if removed:
        return f"{', '.join(removed)} dropped"
    return f"now adds {', '.join(added)}"


def _token_reasons(removed: Counter[Token], added: Counter[Token]) -> list[str]:
    out = []
    for category in ("decision", "date", "version", "number"):
        r = sorted(t for (cat, t), n in removed.items() if cat == category for _ in range(n))
        a = sorted(t for (cat, t), n in added.items() if cat == category for _ in range(n))
        if r or a:
            out.append(_format_reason(category, r, a))
    return out


def _is_ref_entry(sentence: str | None) -> bool:
    return bool(sentence) and bool(_REF_ENTRY.match(sentence))


@dataclass
class _ClaimTokens:
    before: Counter[Token]
    after: Counter[Token]
    paired: bool  # a modified claim: weak tokens may be reported
    reportable: bool  # False for bibliography entries: they only cancel moves
    old_text: str = ""
    new_text: str = ""  # typo fixes undone


#: link targets and literal markers left in a quoted sentence
_QUOTE_NOISE = re.compile(r"\s*<[^<>\s]*>|`+|\*\*|__")
_QUOTED = 160  # characters of an added or dropped sentence quoted in its reason


def _quote(sentence: str) -> str:
    text = plain_unit(_QUOTE_NOISE.sub(" ", clean_inline(sentence))).replace(" .", ".")
    return text if len(text) <= _QUOTED else text[: _QUOTED - 1].rstrip() + "…"


def _positional_reasons(
    e: _ClaimTokens, removed: Counter[Token], added: Counter[Token]
) -> list[str]:
    """What changed in one claim, in reading order, each changed figure, date or status
    next to its replacement (the two sentences aligned word by word, see
    :func:`core.domain.passage_changes.passage_changes`): "$142/kWh → $134/kWh",
    "Q4 2025 → Q1 2026".

    Only differences holding one of the claim's material tokens (``removed`` /
    ``added``) are kept, so a figure merely restyled or moved is not reported. An added or
    dropped sentence is quoted. [] when the alignment finds none of them."""
    if not e.paired:
        text, tokens, verb = (
            (e.new_text, added, "adds") if e.new_text else (e.old_text, removed, "drops")
        )
        return [f"{verb} “{_quote(text)}”"] if tokens else []
    out = []
    for d in passage_changes(e.old_text, e.new_text):
        old_side = material_tokens(d.old) if d.old else Counter()
        new_side = material_tokens(d.new) if d.new else Counter()
        if old_side & removed or new_side & added:
            out.append(str(d))
    return out


def material_reasons(
    old: str,
    new: str,
    claims: list[ClaimChange] | None = None,
    *,
    old_meta: Mapping[str, Any] | None = None,
    new_meta: Mapping[str, Any] | None = None,
) -> list[str]:
    """Human-readable reasons why the change from ``old`` to ``new`` is material.

    - Typed key facts (:mod:`core.domain.keyfacts`: status, stage, milestone, version
      and date fields of the page's header, bullet header, definition table or
      meta tags, and of ``old_meta``/``new_meta``, the records' own metadata):
      any change, reported as ``header Status: Proposed → Approved``.
    - Other fields of an RFC-822 / YAML header: any change except housekeeping fields
      (:data:`core.domain.header_changes.HOUSEKEEPING_HEADERS`; adding a ``Resolution`` is
      material).
    - In changed claims only: numbers, dates, versions and status/decision words
      that occur on one side but not the other. Tokens are compared as multisets
      pooled over all changed claims (so moved, merged or re-split sentences
      cancel out); each claim holding a surviving difference is then reported in
      reading order with each changed figure next to its replacement ("$142 →
      $134", "Q4 2025 → Q1 2026": the old and new sentence aligned word by word),
      an added or dropped sentence quoted ("adds “…”"). Weak tokens (negations,
      RFC 2119 keywords, number words) only count when they flip inside a modified
      claim; bibliography entries and link targets never count on their own. Digits inside URLs,
      link targets, references (PEP 8, RFC 822, #123) and footnote markers are
      ignored, and spelling fixes ("accpetance" -> "acceptance") are undone first.
    - Volume: at least :data:`MATERIAL_PROSE_WORDS` net new (or dropped) words
      of prose, even without any figure in them.

    An empty list means the change is not material.
    """
    if claims is None:
        claims = claim_diff(old, new)
    old_blocks = header_blocks(old)
    new_blocks = header_blocks(new)
    reasons = key_fact_reasons(old, new, old_meta, new_meta, old_blocks, new_blocks)
    units = header_units(old_blocks) | header_units(new_blocks)
    entries, words_before, words_after = _claim_entries(claims, units)
    left_removed, left_added = _unexplained_tokens(entries)
    reasons.extend(_claim_reasons(entries, left_removed, left_added))
    volume = _volume_reason(words_before, words_after)
    if volume is not None:
        reasons.append(volume)
    return _capped(reasons)


def _claim_tokens(c: ClaimChange, ref: bool) -> _ClaimTokens:
    """The material tokens of one changed claim (typo fixes undone in a modified one)."""
    if c.before is not None and c.after is not None:
        after = undo_typo_fixes(c.before, c.after)
        return _ClaimTokens(
            material_tokens(c.before), material_tokens(after), True, not ref, c.before, after
        )
    return _ClaimTokens(
        material_tokens(c.before) if c.before else Counter(),
        material_tokens(c.after) if c.after else Counter(),
        False,
        not ref,
        c.before or "",
        c.after or "",
    )


def _claim_entries(
    claims: list[ClaimChange], units: set[str]
) -> tuple[list[_ClaimTokens], Counter[str], Counter[str]]:
    """The changed claims whose material tokens differ, and the words of prose before and
    after (bibliography entries left out); header fields are left out entirely."""
    entries: list[_ClaimTokens] = []
    words_before: Counter[str] = Counter()
    words_after: Counter[str] = Counter()
    for c in claims:
        if c.before in units or c.after in units:
            continue  # header fields and typed key facts are judged above, field by field
        ref = _is_ref_entry(c.before) or _is_ref_entry(c.after)
        entry = _claim_tokens(c, ref)
        if not ref:
            words_before.update(prose_words(c.before or ""))
            words_after.update(prose_words(c.after or ""))
        if entry.before != entry.after:
            entries.append(entry)
    return entries, words_before, words_after


def _unexplained_tokens(entries: list[_ClaimTokens]) -> tuple[Counter[Token], Counter[Token]]:
    """(removed, added): the tokens left over when all changed claims are pooled, so
    moved, merged or re-split sentences and figures only spelled out cancel out."""
    pooled_before: Counter[Token] = Counter()
    pooled_after: Counter[Token] = Counter()
    for e in entries:
        pooled_before.update(e.before)
        pooled_after.update(e.after)
    left_removed = pooled_before - pooled_after
    left_added = pooled_after - pooled_before
    cancel_spelled_figures(left_removed, left_added)
    cancel_spelled_figures(left_added, left_removed)
    return left_removed, left_added


def _claim_reasons(
    entries: list[_ClaimTokens], left_removed: Counter[Token], left_added: Counter[Token]
) -> list[str]:
    """The reasons of each claim holding a leftover token, in reading order, each once."""
    reasons: list[str] = []
    seen: set[str] = set()
    for e in entries:
        if not e.reportable:
            continue
        removed = (e.before - e.after) & left_removed
        added = (e.after - e.before) & left_added
        if not e.paired:
            removed = Counter({t: n for t, n in removed.items() if not is_weak(t)})
            added = Counter({t: n for t, n in added.items() if not is_weak(t)})
        if not removed and not added:
            continue
        left_removed -= removed
        left_added -= added
        found = _positional_reasons(e, removed, added) or _token_reasons(removed, added)
        for reason in found:
            if reason not in seen:
                seen.add(reason)
                reasons.append(reason)
    return reasons


def _volume_reason(words_before: Counter[str], words_after: Counter[str]) -> str | None:
    """A reason when enough words of prose are new or dropped, else None."""
    new_words = sum((words_after - words_before).values())
    gone_words = sum((words_before - words_after).values())
    if max(new_words, gone_words) >= MATERIAL_PROSE_WORDS:
        return f"text: {new_words} words of new prose, {gone_words} words dropped"
    return None


def _capped(reasons: list[str]) -> list[str]:
    """At most :data:`MAX_REASONS` reasons, the rest summarised in the last one."""
    if len(reasons) > MAX_REASONS:
        extra = len(reasons) - MAX_REASONS + 1
        reasons = reasons[: MAX_REASONS - 1] + [f"… and {extra} more"]
    return reasons
