"""The values of key facts: markup removed for display, and a comparison form.

:func:`clean_value` strips Markdown, rst and HTML markup from a fact's value;
:func:`normalise_value` is the form two values are compared in (casefolded, dates as ISO,
a trailing ``.0`` of a version dropped). :data:`WHOLE_DATE` matches a value that is a date.
"""

from __future__ import annotations

import html
import re

from core.domain.html_comments import replace_html
from core.domain.links import MD_LINK, MD_REF_LINK, link_text

__all__ = ["WHOLE_DATE", "clean_value", "normalise_value"]

_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
WHOLE_DATE = re.compile(
    r"^(?:\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}[- ](?:" + _MONTHS + r")\.?[- ,]+\d{4}"
    r"|(?:" + _MONTHS + r")\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
    r"|(?:" + _MONTHS + r")\.?,? \d{4}"
    r"|(?:Q[1-4]|H[12]) ?\d{4}"
    r"|\d{1,2}/\d{1,2}/\d{2,4})$",
    re.IGNORECASE,
)
_RST_LINK = re.compile(r"`((?:\s*+[^`<\s])*+)\s*<([^>`]*)>`_{1,2}")  # linear: no backtracking
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")  # and comments
_STRONG_CODE = re.compile(r"\*\*|__|`+")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_WS = re.compile(r"\s+")


def _link_text(match: re.Match[str]) -> str:
    return match.group(1).strip() or match.group(2)


def clean_value(value: str) -> str:
    """``value`` with Markdown/rst/HTML markup removed and whitespace collapsed.

    ``**bold**``, ``*em*``, ```code```, ``[text](url)`` -> ``text``, ``\\`text <url>\\`_``
    -> ``text``, HTML tags and entities; a value quoted as a whole loses its quotes.
    """
    s = value
    if "[" in s:
        s = MD_LINK.sub(link_text, s)
        s = MD_REF_LINK.sub(r"\1", s)
    if "`" in s:
        s = _RST_LINK.sub(_link_text, s)
    if "<" in s:
        s = replace_html(s, " ", _HTML_TAG)
    if "*" in s or "_" in s or "`" in s:
        s = _STRONG_CODE.sub("", s)
        s = _EMPHASIS.sub(r"\1", s)
        s = _UNDERSCORE_EMPHASIS.sub(r"\1", s)
    if "&" in s:
        s = html.unescape(s)
    s = _WS.sub(" ", s).strip()
    if s.endswith("\\"):  # Markdown hard line break
        s = s[:-1].rstrip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    return s


_MONTH_NUMBER = {
    m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())
}
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})[- ](" + _MONTHS + r")\.?[- ,]+(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b(" + _MONTHS + r")\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
# "Swift 3.0" is "Swift 3", "4.0.0" is "4"; "3.0.1" and "5.10" are left alone
_TRAILING_ZERO = re.compile(r"(?<=\d)(?:\.0)+(?![.\d])")
_EDGE_PUNCT = " \t.,;:!?()[]{}'\"-–—*_`"
# "Accepted (2021-03-16)" is "Accepted": a parenthesis that only dates the value
_DATE_PARENS = re.compile(r"\s*\((?:on |since |as of )?\d{4}-\d{2}-\d{2}\)")


def _iso(year: str, month: int, day: str) -> str:
    return f"{year}-{month:02d}-{int(day):02d}"


def normalise_value(value: str) -> str:
    """Comparison form of a fact value.

    Casefolded, markup and surrounding punctuation removed, whitespace collapsed, dates
    written as ISO (``1-Oct-2000`` = ``2000-10-01``), a parenthesis holding only a date
    dropped (``Accepted (2021-03-16)`` = ``Accepted``) and a trailing ``.0`` of a version
    number dropped (``Swift 3`` = ``Swift 3.0``).
    """
    s = clean_value(value).casefold()
    if any(c.isdigit() for c in s):
        s = _DAY_MONTH_YEAR.sub(lambda m: _iso(m[3], _MONTH_NUMBER[m[2][:3]], m[1]), s)
        s = _MONTH_DAY_YEAR.sub(lambda m: _iso(m[3], _MONTH_NUMBER[m[1][:3]], m[2]), s)
        s = _ISO_DATE.sub(lambda m: _iso(m[1], int(m[2]), m[3]), s)
        s = _DATE_PARENS.sub("", s)
        s = _TRAILING_ZERO.sub("", s)
    return s.strip(_EDGE_PUNCT)
