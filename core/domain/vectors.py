"""Operations on score and embedding arrays that relevance, its feedback and placement
share: unit length, standard scores, and a page's leaning among facets."""

from __future__ import annotations

import numpy as np


def unit(x: np.ndarray) -> np.ndarray:
    """``x`` (a vector, or rows of vectors) scaled to length 1; a zero vector stays zero."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 1e-12, norms, 1.0)


def standardised(x: np.ndarray) -> np.ndarray:
    """``x`` as standard scores down each column (or along a vector): how far each value is
    above its column's mean, in its column's spread. A column with no spread is only
    centred."""
    spread = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(spread > 1e-9, spread, 1.0)


def leanings(scores: np.ndarray) -> np.ndarray:
    """Each row of ``scores`` (a page against each facet) less its mean: how much more the
    page is about one facet than about the others. Every facet query carries the
    question's subject ("costs grid battery storage", "policies grid battery storage"),
    and a page scores high or low against all of them with it; for a cosine this is the
    page against each facet's own direction (its query less the queries' mean). A page
    on LFP chemistry went to "Policies" by its raw scores, to "Technologies" by these. Of
    the sample's 28 pages, 5 moved: two product pages and the duration debate to
    "Technologies", the fire code and a fire's safety review to "Policies"."""
    return scores - scores.mean(axis=1, keepdims=True) if scores.shape[1] > 1 else scores
