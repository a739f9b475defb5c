"""Relevance feedback: the pages that look most on topic say what "on topic" means here.

A small static model and the question's own words mis-rank whole families of pages: for
"How is static typing in Python evolving", the C-API proposals about "static types"
(heap types versus static types) score above most typing proposals, by meaning and by
words alike. The pages that do rank best are mostly on topic, though, and what they
share ("annotation", "type checker", "generic") is what the question is about. So the
ranking is done twice (pseudo-relevance feedback, after Rocchio): the best pages of the
first ranking move the question's embedding towards their mean, and their most weighted
words become a second lexical query; the final score averages the standardised scores of
the moved embedding, the question's words and the feedback words.

Measured on every page of the PEP and Swift corpora as of 2025 ranked for their nine
tracked questions (``scripts/relevance_ranking.py``): on-topic share of the top 25
0.80 → 0.91 (PEP) and 0.89 → 0.92 (Swift), key sources in the top 40 0.60 → 0.79 and
0.78 → 0.92 (``BENCHMARKS.md``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core.domain.text import cosine
from core.domain.vectors import standardised, unit

FEEDBACK_PAGES = 10  # the best pages of the first ranking that feed back
FEEDBACK_SHARE = 3  # ... at most a third of the pages ranked
FEEDBACK_TERMS = 40  # the feedback words: the most weighted of those pages' words
FEEDBACK_MIN = 12  # fewer pages than this: too few to learn from, the first ranking stands


def refine(
    first: Mapping[str, float],
    lexical: Mapping[str, float],
    words: Mapping[str, dict[str, float]],
    vectors: np.ndarray,
    query: np.ndarray,
) -> dict[str, float]:
    """url → the feedback score of each page of ``first`` (url → its first score, by
    meaning and words), on the first scores' scale (same mean and spread), so that
    margins set on that scale keep their meaning. ``lexical``: url → its score against
    the question's words; ``words``: url → its TF-IDF weights; ``vectors``: the pages'
    unit embeddings, rows in the order of ``first``; ``query``: the question's."""
    urls = list(first)
    if len(urls) < FEEDBACK_MIN:
        return dict(first)
    k = min(FEEDBACK_PAGES, len(urls) // FEEDBACK_SHARE)
    best = sorted(range(len(urls)), key=lambda i: (-first[urls[i]], urls[i]))[:k]
    moved = unit(query + unit(vectors[best].mean(axis=0)))
    meaning = vectors @ moved
    pooled: dict[str, float] = {}
    for i in best:
        for term, weight in words[urls[i]].items():
            pooled[term] = pooled.get(term, 0.0) + weight / k
    top_words = dict(sorted(pooled.items(), key=lambda kv: (-kv[1], kv[0]))[:FEEDBACK_TERMS])
    echo = np.asarray([cosine(words[u], top_words) for u in urls])
    said = np.asarray([lexical[u] for u in urls])
    combined = (standardised(meaning) + standardised(said) + standardised(echo)) / 3
    base = np.asarray([first[u] for u in urls])
    rescaled = standardised(combined) * float(base.std()) + float(base.mean())
    return {u: float(rescaled[i]) for i, u in enumerate(urls)}
