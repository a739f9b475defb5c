"""Material tokens: the dates, versions, numbers and decision words of a text.

:func:`material_tokens` finds what in a sentence makes an edit material; digits inside
URLs, link targets, references (PEP 8, RFC 822, #123), footnote markers, identifiers and
page furniture (copyright years, "last updated" stamps) are scrubbed out first. Weak tokens
(:func:`is_weak`) only count when they flip inside a modified claim;
:func:`cancel_spelled_figures` pairs a figure with the same figure spelled out in words;
:func:`prose_words` counts the words of prose the same scrubbing leaves.
"""

from __future__ import annotations

import re
from collections import Counter

from core.domain.claim_diff import RST_LINK
from core.domain.links import MD_LINK

__all__ = [
    "Token",
    "cancel_spelled_figures",
    "is_weak",
    "material_tokens",
    "prose_words",
]

_WS = re.compile(r"\s+")
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
# footnote and citation markers: "[1]", "[#note]_", "[ref-2]", a named citation reference
# ("[mypy]_"), a Markdown footnote ("[^note]"), a citation's own label (".. [mypy]")
_FOOTNOTE = re.compile(
    r"\[(?:\d+|#[\w-]*|\*|[\w-]*\d[\w-]*)\]_?|\[[^\W\d][\w.-]*\]_|\[\^[^\]\s]+\]|\.\. \[[^\]]*\]"
)
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
_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")


def _scrub(text: str) -> str:
    s = _BOILERPLATE.sub(" ", text)
    s = _ENUM_PREFIX.sub(" ", s)
    s = _URL.sub(" ", s)
    s = RST_LINK.sub(lambda m: f" {m.group(1)} ", s)
    if "](" in s:  # every link holds one
        s = MD_LINK.sub(lambda m: f" {m.group('text')} ", s)
    s = _LINK_TARGET.sub(" ", s)
    close = s.rfind(")") + 1  # every target ends by then: past it, none is looked for
    s = _MD_TARGET.sub(" ", s[:close]) + s[close:]  # (each "](" would read to the end)
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


def cancel_spelled_figures(words_side: Counter[Token], digits_side: Counter[Token]) -> None:
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


def is_weak(token: Token) -> bool:
    """True for negations, RFC 2119 keywords and other weak decision words, and number words."""
    category, value = token
    if category == "decision":
        return value in _WEAK_DECISIONS
    return category == "number" and value.isalpha()


def prose_words(text: str) -> Counter[str]:
    """Casefolded words of prose in ``text`` (scrubbed as for :func:`material_tokens`)."""
    return Counter(w.casefold() for w in _PROSE_WORD.findall(_scrub(text)))
