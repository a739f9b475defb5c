"""How relevant a page is to a report's question: lexical candidates, semantic re-ranking.

Search providers return lexical candidates (the corpus search is BM25). A lexical match
is not relevance: a question about "free-threading" matches every page that says "free".
Each candidate is therefore also scored by a semantic model — `wordllama`, a 16 MB static
embedding model that ships inside its wheel, so it needs no download and no network —
and the two rankings are fused by reciprocal rank fusion (RRF). Measured on the nine
tracked questions of the PEP and Swift corpora (candidates: the offline planner's
queries, 40 hits each, as of 2025-12-31), precision of the top 12: BM25 alone 0.77,
the embedding alone 0.81, fused (k = 20) 0.86.

A page is scored by what stands for it: its title and opening, or — when its best
passages say clearly more, as on long templated pages that open with a metadata header
and a table of contents — its opening blended with them (``core.domain.relevance_passages``).

A page scoring below a floor is not used. The floor adapts to the question (embedding
scores differ by question far more than by page): a first report takes pages scoring at
least TOP_SHARE of the best candidate (FACET_SHARE for a query's best lexical hit);
later, a report's own cited pages say what "on topic" scores for it. Never lower than
RELEVANCE_MIN.

**Centred on the collection.** Where the pages come from a collection Evergreen holds
whole (a corpus, your folder: ``core.sources.base.Collection``), every page of it shares
what the collection is about ("Python", "proposal", "accepted" in every PEP), and a raw
cosine rewards that. Scores are then measured in the space centred on the collection — a
page's and the question's embeddings minus the collection's mean (``Centre``, from a
fixed sample of its pages) — so what sets a page apart within it counts. Ranked that
way, every PEP page as of 2025 against the three PEP questions: precision of the top 25
0.61 → 0.73, key sources in them 0.28 → 0.43 (Swift 0.67 → 0.78, 0.41 → 0.49;
``BENCHMARKS.md``). The centred scores are put back on the raw cosine's scale (same mean
and spread over the sample, per question), so every floor below keeps its meaning. Too
small a collection (under CENTRE_MIN_PAGES) says little about its own mean, and the web
is no collection: there, scores are the raw cosine.

The model loads once per process (about 1–2 s on two cores).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from core.domain import feedback
from core.domain.boilerplate import template_lines, without_template
from core.domain.facets import topic_clause
from core.domain.relevance_passages import OPENING_CHARS, focus, opening, passage_vectors
from core.domain.text import cosine, idf_table, page_terms, terms, tfidf
from core.domain.vectors import unit
from core.errors import EvergreenError
from core.sources.base import Collection

log = logging.getLogger(__name__)

RRF_K = 20  # reciprocal rank fusion constant (measured: 20 beat 5 and 10 on the questions)
RELEVANCE_MIN = 0.2  # cosine below this is off topic whatever the question
FLOOR_QUANTILE = 0.2  # a new page must rank at least as well as this share of cited ones
TOP_SHARE = 0.6  # a first report uses pages scoring at least this share of the best one
FACET_SHARE = 0.4  # ... or this share, when the page is among a query's best lexical hits
FACET_HITS = 2  # (its best position in some query's results, 0-based, at most this)
PAGE_CHARS = OPENING_CHARS  # a page's opening (its lexical words: twice that much text)
CENTRE_SAMPLE = 400  # pages of a collection whose mean is its centre
CENTRE_MIN_PAGES = 100  # a smaller collection is not centred
TOPIC_WEIGHT = 0.5  # a question's topic clause's share of its embedding (measured: BENCHMARKS)
MODEL_ID = "wordllama-l2-supercat-256"  # what the stored sample vectors were made with


@cache
def _model() -> Any:
    """The embedding model, loaded once per process from the files its wheel ships."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        import wordllama  # lazy: the model loads once, on first use
        from wordllama import WordLlama
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise EvergreenError(
            "The relevance model (wordllama) is not installed; reinstall Evergreen."
        ) from exc
    finally:
        # its __init__ calls logging.basicConfig(level=INFO): every library's INFO lines
        # ("HTTP Request: POST …") would reach the terminal; the process's logging is ours
        root.setLevel(level)
        root.handlers[:] = handlers
    # The wheel bundles the weights under wordllama/weights/ (found by default) and the
    # tokenizer config under wordllama/tokenizers/, which the loader only looks for in
    # its cache folder: point the cache at the package itself, and never download.
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def page_text(title: str, content: str) -> str:
    """What stands for a page when it is scored: its title and the start of its text."""
    body = opening(content)
    return f"{title}. {body}" if title else body


class Centre:
    """The embeddings of a sample of a collection's pages, and their mean: the origin of
    the space relevance is measured in for pages of that collection."""

    def __init__(self, sample: np.ndarray) -> None:
        self.sample = sample
        self.mean = sample.mean(axis=0)
        self._units = unit(sample - self.mean)

    def scorer(self, query: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """Scores of embeddings against ``query``: the cosine of both centred, put on the
        raw cosine's scale (the same mean and spread over the sample)."""
        centred = unit(query - self.mean)
        raw, mine = self.sample @ query, self._units @ centred
        spread = float(mine.std()) or 1.0
        scale = float(raw.std()) / spread
        shift = float(raw.mean()) - float(mine.mean()) * scale

        def score(vectors: np.ndarray) -> np.ndarray:
            return unit(vectors - self.mean) @ centred * scale + shift

        return score


class Relevance:
    """Scores texts against one question: the cosine similarity of their embeddings,
    centred on the pages' collection when there is one (``Centre``)."""

    def __init__(self, question: str, collection: object = None, *, as_asked: bool = False) -> None:
        """``collection``: where the pages come from (a search provider); when it is a
        ``Collection``, scores are centred on it. ``as_asked``: embed the text whole, never
        blended with a topic clause (a text that is not a question as the analyst asked it,
        such as "Heading: question")."""
        self.question = question
        self._collection = collection
        self._as_asked = as_asked
        self._focused: dict[tuple[str, str], np.ndarray] = {}  # page → its vector
        self._vectors: dict[str, np.ndarray] = {}  # text → embedding: an update embeds a
        # page once for its relevance and again for its placement

    # made when first scored: a quiet update's discovery makes a Relevance and scores
    # nothing, and then loads no model
    @cached_property
    def centre(self) -> Centre | None:
        return collection_centre(self._collection)

    @cached_property
    def template(self) -> frozenset[str]:
        """The lines the collection's pages share (``core.domain.boilerplate``): a page is
        read without them."""
        return collection_template(self._collection)

    def _read(self, page: tuple[str, str]) -> tuple[str, str]:
        title, content = page
        return title, without_template(content, self.template)

    @cached_property
    def _query(self) -> np.ndarray:
        question = self.question
        return _embed([question])[0] if self._as_asked else _question_vector(question)

    @cached_property
    def _score(self) -> Callable[[np.ndarray], np.ndarray]:
        return self._scorer(self._query)

    def _scorer(self, query: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        if self.centre is None:
            return lambda vectors: vectors @ query
        return self.centre.scorer(query)

    def scores(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return [float(x) for x in self._score(self._embed(texts))]

    def page_scores(self, pages: Mapping[str, tuple[str, str]]) -> dict[str, float]:
        """url → score, for pages given as url → (title, content): each page by its
        opening, or its opening blended with its best passages (``relevance_passages``)."""
        urls = list(pages)
        if not urls:
            return {}
        vectors = self._focus([pages[u] for u in urls], self._score)
        return dict(zip(urls, (float(x) for x in self._score(vectors)), strict=True))

    def _focus(
        self, pages: Sequence[tuple[str, str]], score: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """Each page's vector under ``score``, one row per page: its opening, or its
        opening blended with its best passages when those say clearly more
        (``relevance_passages.focus``). Under the question's own score each page's
        vector is made once (an update ranks the same pages by meaning, then by
        meaning and words)."""
        mine = score is self._score
        todo = [p for p in dict.fromkeys(pages) if not (mine and p in self._focused)]
        if todo:
            cut = passage_vectors([self._read(p) for p in todo], _embed)
            rows = focus([vectors for _bodies, vectors in cut], score)
            if not mine:
                found = dict(zip(todo, rows, strict=True))
                return np.stack([found[p] for p in pages])
            self._focused.update(zip(todo, rows, strict=True))
        return np.stack([self._focused[p] for p in pages])

    def hybrid_scores(
        self,
        pages: Mapping[str, tuple[str, str]],
        semantic: Mapping[str, float] | None = None,
        with_feedback: bool = True,
    ) -> dict[str, float]:
        """url → the mean of the semantic score and a lexical one (TF-IDF cosine of the
        page's title and text with the question's words, IDF over these pages). A small
        static model alone cannot tell a typing page from a web-server page for "static
        typing in Python"; the words can. Used where an update ranks what it keeps.
        ``with_feedback``: ranked again by what the best of these pages share
        (``core.domain.feedback``; not with fewer than FEEDBACK_MIN pages)."""
        urls = list(pages)
        if not urls:
            return {}
        vectors = self._focus([pages[u] for u in urls], self._score)
        if semantic is None:
            semantic = {u: float(x) for u, x in zip(urls, self._score(vectors), strict=True)}
        bags = {
            u: page_terms(t, c[: PAGE_CHARS * 2])
            for u, (t, c) in ((u, self._read(page)) for u, page in pages.items())
        }
        idf = idf_table(bags.values())
        head = self.question.split(":", 1)[0]  # a question's head clause names its topic
        target = tfidf(terms(self.question) + terms(head) * 2, idf)
        words = {u: tfidf(bags[u], idf) for u in pages}
        lexical = {u: cosine(words[u], target) for u in pages}
        first = {u: (semantic[u] + lexical[u]) / 2 for u in pages}
        if not with_feedback:
            return first
        if len(urls) < feedback.FEEDBACK_MIN:
            return first
        space, query = self._space(np.asarray(vectors))
        return feedback.refine(first, lexical, words, space, query)

    def _space(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(unit ``vectors``, the question's) in the space scores are measured in:
        centred on the collection when there is one."""
        if self.centre is None:
            return vectors, self._query
        return unit(vectors - self.centre.mean), unit(self._query - self.centre.mean)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of ``texts``, each text embedded once per question."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, _embed(missing), strict=True))
        return np.stack([self._vectors[t] for t in texts])

    def facet_scores(
        self, pages: Mapping[str, tuple[str, str]], queries: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, list[float]]]:
        """(url → score against the question, url → scores against each facet query),
        each page embedded once."""
        urls = list(pages)
        if not urls:
            return {}, {}
        listed = [pages[u] for u in urls]
        whole = self._score(self._focus(listed, self._score))
        columns = []
        for query in _embed(queries) if queries else []:
            score = self._scorer(query)  # each facet by the passages most about it
            columns.append(score(self._focus(listed, score)))
        per = np.stack(columns, axis=1) if columns else np.zeros((len(urls), 0))
        return (
            {u: float(whole[i]) for i, u in enumerate(urls)},
            {u: [float(x) for x in per[i]] for i, u in enumerate(urls)},
        )


def _embed(texts: Sequence[str]) -> np.ndarray:
    return np.asarray(_model().embed(list(texts), norm=True))


def _question_vector(question: str) -> np.ndarray:
    """The question's embedding — blended with its topic clause's (TOPIC_WEIGHT) when
    a clause after its colon asks what to report ("…: which features were proposed,
    accepted, or finalised, and what is still open?"). Those words are every standard's
    life cycle: embedded whole, the question ranked "Improving bugs.python.org" above
    "Variadic Generics" for static typing (``core.domain.facets.topic_clause``)."""
    topic = topic_clause(question)
    if topic is None:
        return _embed([question])[0]
    whole, head = _embed([question, topic])
    return unit((1 - TOPIC_WEIGHT) * whole + TOPIC_WEIGHT * head)


def collection_centre(source: object) -> Centre | None:
    """The centre of the collection ``source`` searches, or None (the web, a collection
    under CENTRE_MIN_PAGES pages). Its sample's embeddings are stored with the collection
    (made once per revision of it, under 1.5 s for 400 pages) and kept for the process."""
    if not isinstance(source, Collection):
        return None
    return _centre(source, str(source.revision))


_CENTRES: dict[tuple[str, str], Centre | None] = {}


def collection_template(source: object) -> frozenset[str]:
    """The template lines of the collection ``source`` searches (none for the web), learnt
    from the same sample of its pages as its centre; kept for the process."""
    if not isinstance(source, Collection):
        return frozenset()
    key = (source.identity(), str(source.revision))
    if key not in _TEMPLATES:
        pages = source.sample_pages(CENTRE_SAMPLE)
        _TEMPLATES[key] = template_lines(content for _title, content in pages)
    return _TEMPLATES[key]


#: the stored sample's name: its embeddings are of the pages read without their template
SAMPLE_KEY = f"relevance-sample:{MODEL_ID}:{CENTRE_SAMPLE}:without-template"
_TEMPLATES: dict[tuple[str, str], frozenset[str]] = {}


def _centre(source: Collection, revision: str) -> Centre | None:
    key = (source.identity(), revision)
    if key not in _CENTRES:
        _CENTRES[key] = _load_centre(source, revision)
    return _CENTRES[key]


def _load_centre(source: Collection, revision: str) -> Centre | None:
    if source.page_count() < CENTRE_MIN_PAGES:
        return None
    name = SAMPLE_KEY
    stored = source.recall(name)
    if stored:
        try:
            data = json.loads(stored)
            if data.get("revision") == revision:
                raw = base64.b64decode(data["vectors"])
                return Centre(np.frombuffer(raw, dtype=np.float32).reshape(-1, data["dim"]))
        except (ValueError, KeyError, TypeError):
            log.warning("the stored relevance sample is unreadable; making it again")
    pages = source.sample_pages(CENTRE_SAMPLE)
    template = collection_template(source)
    texts = [page_text(t, without_template(c, template)) for t, c in pages]
    vectors = _embed(texts).astype(np.float32)
    encoded = base64.b64encode(vectors.tobytes()).decode()
    value = {"revision": revision, "dim": int(vectors.shape[1]), "vectors": encoded}
    try:
        source.remember(name, json.dumps(value))
    except Exception as exc:  # a read-only collection: made again next time, still right
        log.warning("could not store the relevance sample: %s", exc)
    return Centre(vectors)


def fuse(lexical: Sequence[str], semantic: Mapping[str, float], k: int = RRF_K) -> list[str]:
    """``lexical`` (best first) re-ordered by reciprocal rank fusion with the semantic
    scores; items without a semantic score keep only their lexical rank."""
    sem_rank = {u: r for r, u in enumerate(sorted(semantic, key=lambda u: -semantic[u]))}
    lex_rank = {u: r for r, u in enumerate(lexical)}

    def fused(u: str) -> float:
        score = 1 / (k + lex_rank[u])
        return score + (1 / (k + sem_rank[u]) if u in sem_rank else 0.0)

    return sorted(lexical, key=lambda u: (-fused(u), lex_rank[u]))
