"""Relevance centred on the collection the pages come from (``core.domain.relevance.Centre``):
what every page of a corpus shares counts for nothing, the scores keep the raw cosine's
scale, the sample is made once per revision of the corpus and stored with it, and a
small corpus or the web is scored as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import core.domain.relevance as relevance
from core.bench.truth import load_queries
from core.domain.relevance import CENTRE_MIN_PAGES, Centre, Relevance, collection_centre
from core.sources.corpus import Corpus
from tests.conftest import PEPS, PEPS_CORPUS, write_jsonl


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_centred_scores_keep_the_raw_scale_over_the_sample() -> None:
    rng = np.random.default_rng(7)
    sample = unit(rng.normal(size=(200, 16)) + 3.0)  # pages that share a direction
    query = unit(rng.normal(size=16) + 2.0)
    score = Centre(sample).scorer(query)(sample)
    raw = sample @ query
    assert score.mean() == pytest.approx(raw.mean())
    assert score.std() == pytest.approx(raw.std())


def test_what_every_page_shares_counts_for_nothing_once_centred() -> None:
    rng = np.random.default_rng(11)
    common, topic, other = np.eye(8)[0], np.eye(8)[1], np.eye(8)[2]
    sample = unit(common * 4 + rng.normal(scale=0.5, size=(300, 8)))
    query = unit(common * 2 + topic)  # "Python" in every page, the topic in some
    on_topic = unit(common * 1.0 + topic * 1.6)
    generic = unit(common * 3.0 + other * 0.2)  # all "Python", nothing of the topic
    pages = np.stack([on_topic, generic])
    raw = pages @ query
    centred = Centre(sample).scorer(query)(pages)
    assert raw[1] > raw[0]  # the raw cosine prefers the page that is only "Python"
    assert centred[0] > centred[1]


def _corpus(tmp_path: Path, pages: int, *, name: str = "notes") -> Corpus:
    topics = ["databases", "web servers", "packaging", "typing", "concurrency", "parsers"]
    records = [
        {
            "url": f"https://example.org/{i}",
            "title": f"Proposal {i}: {topics[i % len(topics)]}",
            "as_of": "2024-01-01",
            "content": f"This Python proposal is about {topics[i % len(topics)]}. " * 5,
        }
        for i in range(pages)
    ]
    corpus = Corpus.open(name, create=True)
    corpus.import_path(write_jsonl(tmp_path / f"{name}.jsonl", records))
    return corpus


def test_a_corpus_is_centred_once_per_revision_and_the_sample_is_stored_with_it(
    corpus_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path, CENTRE_MIN_PAGES + 20)
    made = collection_centre(corpus)
    assert made is not None and made.sample.shape[0] == CENTRE_MIN_PAGES + 20
    stored = [k for (k,) in corpus._conn.execute("SELECT key FROM meta")]
    assert any(k.startswith("relevance-sample:") for k in stored)

    # another process (an empty process cache) reads the stored sample: nothing embedded
    monkeypatch.setattr(relevance, "_CENTRES", {})
    monkeypatch.setattr(corpus, "sample_pages", lambda limit: pytest.fail("re-embedded"))
    again = collection_centre(corpus)
    assert again is not None and np.allclose(again.mean, made.mean)

    # pages changed (a new revision): a new sample
    monkeypatch.undo()
    extra = {"url": "https://example.org/new", "title": "Proposal new: typing",
             "as_of": "2024-06-01", "content": "Typing, typing and typing. " * 5}  # fmt: skip
    corpus.import_path(write_jsonl(tmp_path / "more.jsonl", [extra]))
    newer = collection_centre(corpus)
    assert newer is not None and newer.sample.shape[0] == CENTRE_MIN_PAGES + 21


def test_an_unreadable_stored_sample_is_made_again(corpus_home: Path, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, CENTRE_MIN_PAGES)
    key = relevance.SAMPLE_KEY
    corpus.remember(key, json.dumps({"revision": corpus.revision, "vectors": "%%%"}))
    centre = collection_centre(corpus)
    assert centre is not None and centre.sample.shape[0] == CENTRE_MIN_PAGES


def test_a_small_corpus_and_the_web_are_scored_by_the_raw_cosine(
    corpus_home: Path, tmp_path: Path
) -> None:
    small = _corpus(tmp_path, CENTRE_MIN_PAGES - 1, name="small")
    assert collection_centre(small) is None
    assert collection_centre(object()) is None  # a search provider that is no collection
    assert collection_centre(None) is None
    question = "How is typing evolving?"
    texts = ["Typing proposals for Python.", "A web server gateway."]
    assert Relevance(question, small).scores(texts) == Relevance(question).scores(texts)


def test_on_the_pep_corpus_centring_puts_more_on_topic_pages_first(
    corpus_home: Path,
) -> None:
    """Every PEP as it stood at the end of 2025, ranked against each tracked question:
    the top 25 hold more of the question's relevant PEPs centred than raw."""
    if not PEPS_CORPUS.exists():
        pytest.skip("the shared PEP corpus is not beside this checkout")
    corpus = Corpus.open("peps", create=True)
    corpus.import_path(PEPS_CORPUS)
    specs = load_queries(PEPS / "queries.json", corpus)
    pages = {url: (title, content) for url, title, content in _latest(corpus)}
    raw_hits = centred_hits = 0
    for spec in specs:
        for collection, hits in ((None, "raw"), (corpus, "centred")):
            scores = Relevance(spec.query, collection).page_scores(pages)
            top = set(sorted(scores, key=lambda u: -scores[u])[:25])
            if hits == "raw":
                raw_hits += len(top & spec.relevant)
            else:
                centred_hits += len(top & spec.relevant)
    assert centred_hits > raw_hits


def _latest(corpus: Corpus) -> list[tuple[str, str, str]]:
    return list(
        corpus._conn.execute(
            "SELECT url, title, content FROM versions WHERE gone = 0 AND valid_until IS NULL"
        )
    )
