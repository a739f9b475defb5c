"""A collection's template: the lines that many of its pages share word for word — a
table of contents of the template's headings, a checklist, the template's instructions,
a licence footer. They say what every page of the collection is, not what this one is
about, so relevance reads a page without them.

Which lines those are is learnt from the collection itself (a sample of its pages), never
named: a line that has a letter and is no code fence is template when at least
TEMPLATE_SHARE of the sampled pages hold it, and at least TEMPLATE_MIN_PAGES of them — a
header line too ("Status: Final", "Layer: Applications": what kind of page, not what
about; reading only the bodies measured worse, BENCHMARKS.md). On a collection rewritten in the
layout of long templated pages (``scripts/templated_corpus.py``) the template's table of
contents and checklist made every page look alike to the embedding model (measured in
BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from core.domain.text import FENCE

TEMPLATE_SHARE = 0.2  # of the sampled pages
TEMPLATE_MIN_PAGES = 5
SCAN_CHARS = 20_000  # the part of a page read (relevance reads no further)
_LETTER = re.compile(r"[^\W\d_]")


def line_key(line: str) -> str:
    """A line as compared across pages: blanks collapsed, case folded."""
    return " ".join(line.split()).casefold()


def template_lines(pages: Iterable[str]) -> frozenset[str]:
    """The lines (``line_key``) held by at least TEMPLATE_SHARE of ``pages`` and at least
    TEMPLATE_MIN_PAGES of them; none when there are too few pages to tell."""
    counts: Counter[str] = Counter()
    n = 0
    for text in pages:
        n += 1
        lines = {line_key(line) for line in text[:SCAN_CHARS].splitlines()}
        # markup — a code fence, a brace, a rule — is not template: without its fences a
        # page's code would read as prose
        counts.update(line for line in lines if _LETTER.search(line) and not FENCE.match(line))
    floor = max(TEMPLATE_MIN_PAGES, TEMPLATE_SHARE * n)
    if n < TEMPLATE_MIN_PAGES:
        return frozenset()
    return frozenset(line for line, k in counts.items() if k >= floor)


def without_template(text: str, template: frozenset[str]) -> str:
    """``text`` without its template lines (the others as they were)."""
    if not template:
        return text
    return "\n".join(line for line in text.split("\n") if line_key(line) not in template)
