"""Where a sentence ends in report text.

:func:`split_cited_sentences` — a report paragraph, whose sentences end with their
citations ("… rose [3]. Next", "… rose. [3] Next"; the grammar is ``core.citations``).
"""

from __future__ import annotations

import re

from core.citations import GROUP

__all__ = ["split_cited_sentences"]

#: a report sentence ends at . ! ? (or its citations) before a capital, a quote or the end;
#: and after "[n]." also before a figure or a dash ("… [13]. 3.6 will receive …")
_CITED_SENTENCE = re.compile(
    rf"\S.*?(?:[.!?](?:\s?{GROUP})*|{GROUP}(?:\s?{GROUP})*[.!?]?)"
    r"(?=\s+[A-Z\"'(`*]|\s*$|(?<=\]\.)\s+[-\d])",
    re.S,
)
_ABBREVIATION_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|cf|vs|approx|incl|resp|No|Nos|Fig|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Ltd|"
    r"Co|Corp)|(?<![\w.])[A-Z])\.$"
)
_CITED_END = re.compile(rf"{GROUP}[.!?]$")  # "… [3]." ends a sentence, parentheses or not


def split_cited_sentences(paragraph: str) -> list[str]:
    """A report paragraph split into sentences, each keeping its own [n] citations.

    No split after an abbreviation ("e.g. PyPI"), an initial ("J. Smith") or inside
    parentheses still open — unless the sentence ends with its citation ("… [3]."), which
    a paragraph of ours only does at a sentence's end."""
    text = paragraph.strip()
    parts: list[str] = []
    pos = 0
    for m in _CITED_SENTENCE.finditer(text):
        parts.append(m.group(0).strip())
        pos = m.end()
    if text[pos:].strip():
        parts.append(text[pos:].strip())
    merged: list[str] = []
    for part in (p for p in parts if p):
        prev = merged[-1] if merged else ""
        open_paren = prev.count("(") > prev.count(")") and not _CITED_END.search(prev)
        if prev and (_ABBREVIATION_END.search(prev) or open_paren):
            merged[-1] = f"{prev} {part}"
        else:
            merged.append(part)
    return merged
