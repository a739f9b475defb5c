"""Material edits: which changes of a page matter even when it stays almost the same.

A small edit can be *material* — a status, a number, a date, a version, a decision word,
a header field — while the page's similarity stays above the gate. :func:`material_reasons`
says why a change is material (an empty list: it is not): changed key facts and header
fields (:mod:`core.header_changes`), then the material tokens (dates, versions, numbers,
status and decision words) that changed claims (:mod:`core.claim_diff`) gained or lost,
each shown next to its replacement, and a large enough volume of new or dropped prose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, process

from core.claim_diff import RST_LINK, ClaimChange, claim_diff
from core.header_changes import header_units, key_fact_reasons
from core.keyfacts import header_blocks
from core.links import MD_LINK

#: at most this many reasons are returned (the rest are summarised in one line)
MAX_REASONS = 40
#: this many net new (or dropped) words of prose make a change material by volume
MATERIAL_PROSE_WORDS = 150
_WS = re.compile(r"\s+")

__all__ = ["MATERIAL_PROSE_WORDS", "MAX_REASONS", "Token", "material_reasons", "material_tokens"]

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# months that can start a year-less date ("May 5" is too often the verb)
_MONTH_DAY = _MONTH.replace("may|", "")
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?"
_DATE = re.compile(
    r"(?<![\w.])(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"  # ISO
    r"|\d{1,2}[-/ ]" + _MONTH + r"\.?[-/ ,]+\d{4}"  # 13-Jun-2000, 13 June 2000
    r"|" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"  # June 13, 2000
    r"|" + _MONTH + r"\.?,?\s+\d{4}"  # Mar 2026
    r"|" + _MONTH_DAY + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?![\d:.,]\d)"  # June 13
    r"|\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r"\b"  # 13 June
    r"|(?:Q[1-4]|H[12])\s*[-/]?\s*\d{4}"  # Q3 2026, H1 2027
    r"|\d{1,2}/\d{1,2}/\d{2,4}"  # 01/02/2026
    r"|\d{4}-\d{2}(?![\d-])"  # 2026-03
    r"|" + _TIME + r")(?![\w])",
    re.IGNORECASE,
)
_VERSION = re.compile(
    r"(?<![\w.])(?:"
    r"v\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|alpha|beta|dev|post)\d*)?"  # v2, v2.1
    r"|\d+\.\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|\.dev|\.post)\d*)?"  # 3.12.0, 1.2.3rc1
    r"|\d+\.\d+(?:a|b|rc|\.dev|\.post)\d*"  # 3.13a1
    r"|(?<=python )\d+(?:\.\d+)?"  # Python 3.12
    r"|(?<=version )\d+(?:\.\d+)+"  # version 2.1
    r")(?![\w.]\w)",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.,])(?:[$€£¥]\s?)?(?:\d+(?:[.,]\d+)*[½¼¾⅓⅔⅛]?|[½¼¾⅓⅔⅛])"
    r"(?:\s?%|\s?percent\b)?(?:[A-Za-z]{1,3})?(?![\w])",  # 2nd, 10ms, 5GB, 3pm
    re.IGNORECASE,
)

# Decision/status words: (pattern, canonical form, strong). Strong words count in
# any changed claim; weak ones (negations, RFC 2119 keywords, "implemented", ...)
# only when they flip inside a modified claim, because new prose is full of them.
_DECISION_WORDS: list[tuple[str, str, bool]] = [
    (r"accept(?:ed|s|ing|ance)?", "accepted", True),
    (r"approv(?:e|ed|es|ing|al)", "approved", True),
    (r"final(?:i[sz]ed|i[sz]es|i[sz]e|i[sz]ing|i[sz]ation)?", "final", True),
    (r"reject(?:ed|s|ing|ion)?", "rejected", True),
    (r"deprecat(?:e|ed|es|ing|ion)", "deprecated", True),
    (r"supersed(?:e|ed|es|ing)", "superseded", True),
    (r"withdr(?:aw|awn|ew|aws|awing|awal)", "withdrawn", True),
    (r"defer(?:red|s|ring|ral)?", "deferred", True),
    (r"draft(?:ed|s)?", "draft", True),
    (r"provisional(?:ly)?", "provisional", True),
    (r"active", "active", True),
    (r"postpon(?:e|ed|es|ing|ement)", "postponed", True),
    (r"cancel(?:l?ed|s|l?ing|l?ation)?", "cancelled", True),
    (r"operational", "operational", True),
    (r"propos(?:e|ed|es|ing|al|als)", "proposed", True),
    (r"suspend(?:ed|s|ing)?|suspension", "suspended", True),
    (r"repeal(?:ed|s|ing)?", "repealed", True),
    (r"in force", "in force", True),
    (r"delay(?:ed|s|ing)?", "delayed", True),
    (r"obsolete[ds]?", "obsolete", True),
    (r"abandon(?:ed|s|ing)?", "abandoned", True),
    (r"retir(?:e|ed|es|ing)", "retired", True),
    (r"end[- ]of[- ]life", "end-of-life", True),
    (r"eol", "end-of-life", True),
    (r"implemented", "implemented", True),
    (r"released", "released", False),
    (r"complete[ds]?", "completed", False),
    (r"resolved", "resolved", False),
    (r"no longer", "no longer", False),
    (r"not|cannot|can't|won't|don't|doesn't|isn't|aren't|wasn't", "not", False),
    (r"never", "never", False),
]
_WEAK_DECISIONS = frozenset(
    [canon for _, canon, strong in _DECISION_WORDS if not strong]
    + ["MUST NOT", "SHALL NOT", "SHOULD NOT", "MUST", "SHALL", "SHOULD", "REQUIRED", "MAY"]
)
_PHRASES = ("in force", "no longer", "end[- ]of[- ]life")
_SINGLE_WORDS = [(p, c) for p, c, _ in _DECISION_WORDS if p not in _PHRASES]
_DECISION_WORD = re.compile(
    "(?:" + "|".join(f"({pat})" for pat, _ in _SINGLE_WORDS) + ")", re.IGNORECASE
)
_DECISION_PHRASE = re.compile(r"\b(in force|no longer|end[- ]of[- ]life)\b", re.IGNORECASE)
# Lifecycle vocabulary beyond the decision words (stems): a typo rule must not merge
# two of these ("implementable" -> "implemented", "provisional" -> "proposed").
_LIFECYCLE_WORD = re.compile(
    r"(?:accept|approv|final|reject|deprecat|supersed|withdr|defer|draft|provision|activ|"
    r"postpon|cancel|operat|propos|suspend|repeal|delay|obsolet|abandon|retir|implement|"
    r"releas|complet|resolv|review|plann|schedul|construct|commission|pending|experiment|"
    r"stabl|preview|sunset|discontinu|ratif|adopt|enact|publish|announc|revok|revoc|expir|"
    r"deploy|launch|pilot|submit|enforc)\w*"
)
_ALPHA_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_decision_cache: dict[str, str | None] = {}


def _decision_canon(word: str) -> str | None:
    """Canonical decision word for ``word`` (one word, any case), or None."""
    key = word.casefold()
    if key not in _decision_cache:
        if len(_decision_cache) > 50_000:
            _decision_cache.clear()
        m = _DECISION_WORD.fullmatch(key)
        _decision_cache[key] = _SINGLE_WORDS[(m.lastindex or 1) - 1][1] if m else None
    return _decision_cache[key]


_NORMATIVE = re.compile(r"\b(MUST NOT|SHALL NOT|SHOULD NOT|MUST|SHALL|SHOULD|REQUIRED|MAY)\b")
_CARDINALS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion trillion dozen"
)
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_CARDINALS.split()) + r")\b", re.IGNORECASE)
# A figure spelled out in words is the same figure ("5 to 10" -> "five to ten" is style).
_CARDINAL_VALUE = {
    w: str(v)
    for v, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "dozen": "12",
}

# Things whose digits are not figures: URLs, link targets, references, footnotes, code-ish ids.
_URL = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>`\"')\]]+", re.IGNORECASE)
_LINK_TARGET = re.compile(r"<[^<>\s]*(?:/|\.|#|@)[^<>\s]*>")
_MD_TARGET = re.compile(r"\]\([^)]*\)")
_FOOTNOTE = re.compile(r"\[(?:\d+|#[\w-]*|\*|[\w-]*\d[\w-]*)\]_?|\.\. \[[^\]]*\]")
_REFERENCE = re.compile(
    r"\b(?:PEPs?|RFCs?|bpo|gh|GH|BPO|issues?|bugs?|patch|PR|pull request|SF|"
    r"CVE)[\s:#-]*\d+(?:\s*(?:,|and|or)\s*\d+)*"
    r"|:(?:pep|rfc|issue|gh|cve|pypi):`[^`]*`"
    r"|#\d+",
)
_HAS_NORMATIVE = re.compile(r"MUST|SHALL|SHOULD|REQUIRED|MAY")
_HAS_DIGIT = re.compile(r"[\d½¼¾⅓⅔⅛]")
# identifiers with digits (utf8, x86_64, 0x1F, 3rdparty, 1e10): not figures
_IDENT_NUMBER = re.compile(
    r"[\w.]*[A-Za-z_][\w.]*\d[\w.]*|\d+(?:_|[A-Za-z]{4,}|[A-Za-z]{1,3}\d)\w*"
)
_ENUM_PREFIX = re.compile(r"^\s*(?:\(?\d{1,3}[.)]|#\.|\(?[a-zA-Z][.)])\s+")
_REPEATED_WORD = re.compile(r"\b([^\W\d_]+)(?:\s+\1\b)+", re.IGNORECASE)
# Page furniture whose dates move on every edit: copyright years, "last updated" stamps.
_BOILERPLATE = re.compile(
    r"(?:©|\(c\)|copyright)(?:\s*(?:©|\(c\)))?\s*\d{4}(?:\s*[-–]\s*\d{2,4})?"
    r"|\b(?:last\s+)?(?:updated|modified|edited|reviewed|revised)(?:\s+(?:on|at))?:?\s+"
    r"(?:" + _DATE.pattern + r")(?:,?\s+(?:at\s+)?" + _TIME + r")?",
    re.IGNORECASE,
)
# Bibliography entries and link targets: citations, not claims.
_REF_ENTRY = re.compile(r"^\s*(?:\.\.\s+(?:\[[^\]]+\]|_)|\[[\w#*-]+\]\s)")
_WORD = re.compile(r"[^\W\d_]{4,}")
_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")


def _scrub(text: str) -> str:
    s = _BOILERPLATE.sub(" ", text)
    s = _ENUM_PREFIX.sub(" ", s)
    s = _URL.sub(" ", s)
    s = RST_LINK.sub(lambda m: f" {m.group(1)} ", s)
    if "](" in s:  # every link holds one
        s = MD_LINK.sub(lambda m: f" {m.group('text')} ", s)
    s = _LINK_TARGET.sub(" ", s)
    s = _MD_TARGET.sub(" ", s)
    s = _FOOTNOTE.sub(" ", s)
    s = _REFERENCE.sub(" ", s)
    s = s.replace("``", " ").replace("`", " ").replace("*", " ")
    return _REPEATED_WORD.sub(r"\1", s)


Token = tuple[str, str]


def material_tokens(text: str) -> Counter[Token]:
    """Multiset of (category, token) items in ``text`` that make an edit material.

    Categories: ``date``, ``version``, ``number`` (digits, money, percentages,
    fractions, cardinal words) and ``decision`` (status/decision words, negations
    and RFC 2119 keywords).
    """
    tokens: Counter[Token] = Counter()
    s = _scrub(text)

    def take(pattern: re.Pattern[str], category: str, s: str, fold: bool = True) -> str:
        def repl(m: re.Match[str]) -> str:
            token = _WS.sub(" ", m.group(0)).strip()
            tokens[(category, token.casefold() if fold else token)] += 1
            return " "

        return pattern.sub(repl, s)

    if _HAS_DIGIT.search(s):
        s = take(_DATE, "date", s)
        s = take(_VERSION, "version", s)
        s = _IDENT_NUMBER.sub(" ", s)
        for m in _NUMBER.finditer(s):
            tok = m.group(0).replace(" ", "").casefold().replace("percent", "%")
            tokens[("number", tok)] += 1
    s = take(_NORMATIVE, "decision", s, fold=False) if _HAS_NORMATIVE.search(s) else s
    for m in _NUMBER_WORD.finditer(s):
        tokens[("number", m.group(0).casefold())] += 1
    for word in _ALPHA_WORD.findall(s):
        canon = _decision_canon(word)
        if canon:
            tokens[("decision", canon)] += 1
    for m in _DECISION_PHRASE.finditer(s):
        phrase = m.group(0).casefold()
        tokens[("decision", "end-of-life" if phrase.startswith("end") else phrase)] += 1
    return tokens


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


def _undo_typo_fixes(before: str, after: str) -> str:
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


def _cancel_spelled_figures(words_side: Counter[Token], digits_side: Counter[Token]) -> None:
    """Drop figures that only changed between digits and words, from both sides."""
    for (category, value), n in list(words_side.items()):
        digit = _CARDINAL_VALUE.get(value)
        if category != "number" or digit is None:
            continue
        k = min(n, digits_side[("number", digit)])
        if k:
            words_side[(category, value)] -= k
            digits_side[("number", digit)] -= k
    words_side += Counter()  # drop zero counts
    digits_side += Counter()


def _is_weak(token: Token) -> bool:
    category, value = token
    if category == "decision":
        return value in _WEAK_DECISIONS
    return category == "number" and value.isalpha()


def _prose_words(text: str) -> Counter[str]:
    return Counter(w.casefold() for w in _PROSE_WORD.findall(_scrub(text)))


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
    from core.claim_words import plain_unit
    from core.text import clean_inline

    text = plain_unit(_QUOTE_NOISE.sub(" ", clean_inline(sentence))).replace(" .", ".")
    return text if len(text) <= _QUOTED else text[: _QUOTED - 1].rstrip() + "…"


def _positional_reasons(
    e: _ClaimTokens, removed: Counter[Token], added: Counter[Token]
) -> list[str]:
    """What changed in one claim, in reading order, each changed figure, date or status
    next to its replacement (the two sentences aligned word by word, see
    :func:`core.anchors.passage_changes`): "$142/kWh → $134/kWh", "Q4 2025 → Q1 2026".

    Only differences holding one of the claim's material tokens (``removed`` /
    ``added``) are kept, so a figure merely restyled or moved is not reported. An added or
    dropped sentence is quoted. [] when the alignment finds none of them."""
    if not e.paired:
        text, tokens, verb = (
            (e.new_text, added, "adds") if e.new_text else (e.old_text, removed, "drops")
        )
        return [f"{verb} “{_quote(text)}”"] if tokens else []
    from core.passage_changes import passage_changes

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

    - Typed key facts (:mod:`core.keyfacts`: status, stage, milestone, version
      and date fields of the page's header, bullet header, definition table or
      meta tags, and of ``old_meta``/``new_meta``, the records' own metadata):
      any change, reported as ``header Status: Proposed → Approved``.
    - Other fields of an RFC-822 / YAML header: any change except housekeeping fields
      (:data:`core.header_changes.HOUSEKEEPING_HEADERS`; adding a ``Resolution`` is
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

    entries: list[_ClaimTokens] = []
    words_before: Counter[str] = Counter()
    words_after: Counter[str] = Counter()
    for c in claims:
        if c.before in units or c.after in units:
            continue  # header fields and typed key facts are judged above, field by field
        ref = _is_ref_entry(c.before) or _is_ref_entry(c.after)
        if c.before is not None and c.after is not None:
            after = _undo_typo_fixes(c.before, c.after)
            entry = _ClaimTokens(
                material_tokens(c.before), material_tokens(after), True, not ref, c.before, after
            )
        else:
            entry = _ClaimTokens(
                material_tokens(c.before) if c.before else Counter(),
                material_tokens(c.after) if c.after else Counter(),
                False,
                not ref,
                c.before or "",
                c.after or "",
            )
        if not ref:
            words_before.update(_prose_words(c.before or ""))
            words_after.update(_prose_words(c.after or ""))
        if entry.before != entry.after:
            entries.append(entry)

    pooled_before: Counter[Token] = Counter()
    pooled_after: Counter[Token] = Counter()
    for e in entries:
        pooled_before.update(e.before)
        pooled_after.update(e.after)
    left_removed = pooled_before - pooled_after
    left_added = pooled_after - pooled_before
    _cancel_spelled_figures(left_removed, left_added)
    _cancel_spelled_figures(left_added, left_removed)

    seen: set[str] = set()
    for e in entries:
        if not e.reportable:
            continue
        removed = (e.before - e.after) & left_removed
        added = (e.after - e.before) & left_added
        if not e.paired:
            removed = Counter({t: n for t, n in removed.items() if not _is_weak(t)})
            added = Counter({t: n for t, n in added.items() if not _is_weak(t)})
        if not removed and not added:
            continue
        left_removed -= removed
        left_added -= added
        found = _positional_reasons(e, removed, added) or _token_reasons(removed, added)
        for reason in found:
            if reason not in seen:
                seen.add(reason)
                reasons.append(reason)

    new_words = sum((words_after - words_before).values())
    gone_words = sum((words_before - words_after).values())
    if max(new_words, gone_words) >= MATERIAL_PROSE_WORDS:
        reasons.append(f"text: {new_words} words of new prose, {gone_words} words dropped")

    if len(reasons) > MAX_REASONS:
        extra = len(reasons) - MAX_REASONS + 1
        reasons = reasons[: MAX_REASONS - 1] + [f"… and {extra} more"]
    return reasons
