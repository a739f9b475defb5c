"""Relevance feedback (``core.domain.feedback``): the pages ranked best say what "on topic"
means for the question, and the ranking is done again with it — on the real PEP corpus,
where "static typing" is also what the C-API proposals call their static types."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.bench.truth import load_queries
from core.domain.feedback import FEEDBACK_MIN, refine
from core.domain.relevance import Relevance
from core.sources.corpus import Corpus
from tests.conftest import PEPS, PEPS_CORPUS


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _family_case() -> tuple[
    dict[str, float], dict[str, float], dict[str, dict[str, float]], np.ndarray, np.ndarray
]:
    """Six pages of family A (about the question), six of family B (sharing its words):
    the first ranking puts A's best three first, then B's three, then A's other three."""
    a, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    urls = [f"a{i}" for i in range(6)] + [f"b{i}" for i in range(6)]
    first = {"a0": 0.9, "a1": 0.85, "a2": 0.8, "b0": 0.7, "b1": 0.69, "b2": 0.68}
    first.update({"a3": 0.5, "a4": 0.49, "a5": 0.48, "b3": 0.3, "b4": 0.29, "b5": 0.28})
    first = {u: first[u] for u in urls}
    lexical = {u: 0.3 for u in urls}  # the question's words: no help
    words = {u: {"annotation": 1.0, "checker": 0.5} if u[0] == "a" else {"heap": 1.0} for u in urls}
    vectors = _unit(
        np.stack([a + 0.1 * np.eye(3)[2] * i if u[0] == "a" else b for i, u in enumerate(urls)])
    )
    query = _unit(a + b)  # the question is as close to both families
    return first, lexical, words, vectors, query


def test_what_the_best_pages_share_lifts_the_rest_of_their_family() -> None:
    first, lexical, words, vectors, query = _family_case()
    scores = refine(first, lexical, words, vectors, query)
    order = sorted(scores, key=lambda u: -scores[u])
    assert set(order[:6]) == {f"a{i}" for i in range(6)}, order
    # on the first ranking's scale: margins set on it keep their meaning
    assert np.mean(list(scores.values())) == pytest.approx(np.mean(list(first.values())))
    assert np.std(list(scores.values())) == pytest.approx(np.std(list(first.values())))


def test_too_few_pages_to_learn_from_keep_the_first_ranking() -> None:
    first, lexical, words, vectors, query = _family_case()
    few = dict(list(first.items())[: FEEDBACK_MIN - 1])
    assert refine(few, lexical, words, vectors[: len(few)], query) == few


def test_on_the_pep_corpus_feedback_puts_more_on_topic_pages_first(corpus_home: Path) -> None:
    """Every PEP as it stood at the end of 2025, ranked against each tracked question by
    words and meaning: the top 25 hold more of each question's relevant PEPs with
    feedback than without (typing: the C-API pages about static types give way)."""
    if not PEPS_CORPUS.exists():
        pytest.skip("the shared PEP corpus is not beside this checkout")
    corpus = Corpus.open("peps", create=True)
    corpus.import_path(PEPS_CORPUS)
    specs = load_queries(PEPS / "queries.json", corpus)
    rows = corpus._conn.execute(
        "SELECT url, title, content FROM versions WHERE gone = 0 AND valid_until IS NULL"
    )
    pages = {url: (title, content) for url, title, content in rows}
    for spec in specs:
        rel = Relevance(spec.query, corpus)
        semantic = rel.page_scores(pages)
        hits = []
        for with_feedback in (False, True):
            scores = rel.hybrid_scores(pages, semantic, with_feedback=with_feedback)
            hits.append(len(set(sorted(scores, key=lambda u: -scores[u])[:25]) & spec.relevant))
        assert hits[1] >= hits[0], (spec.id, hits)
        if spec.id == "typing":
            assert hits[1] > hits[0], hits
