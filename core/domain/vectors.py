"""Two operations on score and embedding arrays that relevance, its feedback and placement
share: unit length, and standard scores."""

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
