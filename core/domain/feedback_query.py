"""A search query from what a report already cites: the words that set its cited pages
apart from the other pages its pool holds (relevance feedback for search, after Rocchio,
with the uncited pages as the negative side).

A question's own words do not find every new page about it. "How is static typing in
Python evolving …" searched lexically loses "typing" itself (its stem, "type", is in
every PEP header), and "Parameter Specification Variables" ranked 155th of the 2019
window's hits. The pages the report cites say what the topic is in the corpus's own
words ("checker", "mypy", "generic", "union"), and the pages its searches brought in but
it does not cite, with a sample of the whole collection when there is one, say what it
is not; one more search with those words finds new pages that the question's words rank
too low (measured in ``BENCHMARKS.md``). A page's header block is left out: the fields it
declares (dates, formats, authors) say when and by whom, not what about.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from core.domain.header_blocks import page_body
from core.domain.text import content_words, page_terms, stem

FEEDBACK_TERMS = 12  # words in the query
MIN_CITED = 5  # fewer cited pages than this: too few to say what the topic is
MIN_SHARE = 0.2  # a word must be in at least this share of the cited pages
TEXT_CHARS = 8000  # the title and this much of a page's text stand for it
_SMOOTH = 0.05  # keeps the odds finite for words no uncited page has


def feedback_query(
    cited: Sequence[tuple[str, str]], others: Sequence[tuple[str, str]], n: int = FEEDBACK_TERMS
) -> str:
    """The ``n`` words, space-separated, that are most typical of the ``cited`` pages
    ((title, text) each) against the ``others`` of the pool: a word's share of cited pages
    times the log-odds of that share against its share of the others. Each word is given
    as the cited pages most often write it. "" with fewer than MIN_CITED cited pages."""
    if len(cited) < MIN_CITED:
        return ""
    mine, theirs = _doc_freq(cited), _doc_freq(others)
    n_mine, n_theirs = len(cited), max(1, len(others))
    floor = max(2, math.ceil(MIN_SHARE * n_mine))
    scores = {}
    for term, count in mine.items():
        if count < floor:
            continue
        p, q = count / n_mine, theirs[term] / n_theirs
        scores[term] = p * math.log((p + _SMOOTH) / (q + _SMOOTH))
    best = sorted((t for t in scores if scores[t] > 0), key=lambda t: (-scores[t], t))[:n]
    spelling = _spellings(cited)
    return " ".join(spelling.get(t, t) for t in best)


def _doc_freq(pages: Iterable[tuple[str, str]]) -> Counter[str]:
    """How many of ``pages`` hold each word (stem)."""
    counts: Counter[str] = Counter()
    for title, text in pages:
        counts.update(_page_words(title, text))
    return counts


def _page_words(title: str, text: str) -> tuple[str, ...]:
    """The distinct words (stems) of a page's title and head, without its header block.
    Kept for the process by a digest of what they are read from: an update counts them
    for every page of its pool and of the collection's sample, and from one update to
    the next most of those pages are unchanged (a yearly chain spent 2.7 of its 27 s
    here, issue 42)."""
    head = text[:TEXT_CHARS]
    key = hashlib.blake2b(f"{title}\0{head}".encode(errors="surrogatepass"), digest_size=16)
    digest = key.digest()
    words = _WORDS.pop(digest, None)
    if words is None:
        words = tuple(set(page_terms(title, page_body(head))))
        while len(_WORDS) >= WORDS_CACHE:
            _WORDS.pop(next(iter(_WORDS)))  # the least recently used
    _WORDS[digest] = words  # most recently used last
    return words


WORDS_CACHE = 8192  # pages whose words a process keeps
_WORDS: dict[bytes, tuple[str, ...]] = {}


def _spellings(pages: Iterable[tuple[str, str]]) -> dict[str, str]:
    """stem → the spelling of it the pages use most (a search engine is sent words)."""
    seen: Counter[tuple[str, str]] = Counter()
    for title, text in pages:
        words = content_words(f"{title} {page_body(text[:TEXT_CHARS])}")
        seen.update((stem(word), word) for word in words)
    out: dict[str, str] = {}
    for (s, word), _n in seen.most_common():
        out.setdefault(s, word)
    return out
