"""Where a new page goes in a report: the section it is most about.

Three signals, each standardised per section over the pages being placed *and* the pages
the report already cites (so that "how much more than usual does this page match this
section" is comparable across sections: a broad heading matches every page a little):

- **words**: the TF-IDF cosine of the page's title and text with the section's heading
  (weighted three times) and body — what the section already says;
- **title**: the TF-IDF cosine of the page's title with the section's heading — what a
  reader matches first (``title_scores``);
- **meaning**: the semantic score of the page against the section's heading with the
  question's subject (``section_query``; a section named for a facet is scored as that
  facet is when a first report is planned) — what the section is about, whatever its
  body came to hold.

Words alone put "Package Manager Target Based Dependency Resolution" under "Package
registries" (both say "package" a lot) and macro proposals under "Result builders"
when the "Macro system" section of a report created before macros existed held package
manager pages; the heading's meaning puts them where an analyst would. Meaning alone
confuses a shared word in a title ("User-Defined Type Guards" under "User Defined
('with') Statements"); the sum of both, compared on the bench's updates, chose the
analyst's section more often than either (``BENCHMARKS.md``). Both put "Span: Safe Access
to Contiguous Storage" under "Noncopyable and nonescapable types", for its lifetimes and
~Escapable, while "Span and InlineArray" held pointer pages; its title puts it under Span.

A page that shares no words with any section (best cosine under PLACE_MIN) fits none.
In a report on a question without named parts it goes to a new section. When the
question names its parts, such a page is placed by the parts' names alone
(``facet_fits``): a page that fits none of them is about none of the things the question
asks, and is not written up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.domain.facets import Facet, facets_of, subject_of
from core.domain.text import cosine, idf_table, page_terms, terms, tfidf
from core.domain.vectors import standardised

PLACE_MIN = 0.06  # TF-IDF cosine under which a page shares too few words with any section
FACET_KEY = "facet:"  # the key of a part of the question that has no section yet
STEM_PREFIX = 5  # a stem this long matches a facet name's stem it begins (or that begins it)
MIN_ROWS = 3  # pages needed to standardise a section's scores; fewer: raw scores


def word_scores(
    docs: Sequence[tuple[str, str]],
    sections: Sequence[tuple[str, str]],
    spell: Callable[[str], str] | None = None,
) -> np.ndarray:
    """docs × sections TF-IDF cosines. ``docs``: (title, text); ``sections``: (heading,
    body); ``spell``: each word of the docs as the sections spell it, if it differs."""
    targets = [terms(h) * 3 + terms(b) for h, b in sections]
    bags = [page_terms(t, c) for t, c in docs]
    if spell is not None:
        bags = [[spell(w) for w in bag] for bag in bags]
    return _cosines(bags, targets)


def _cosines(bags: Sequence[list[str]], targets: Sequence[list[str]]) -> np.ndarray:
    """bags × targets TF-IDF cosines, IDF over both."""
    idf = idf_table([*targets, *bags])
    tvecs = [tfidf(t, idf) for t in targets]
    return np.asarray(
        [[cosine(tfidf(bag, idf), tv) for tv in tvecs] for bag in bags], dtype=float
    ).reshape(len(bags), len(targets))


def title_scores(titles: Sequence[str], sections: Sequence[tuple[str, str, str]]) -> np.ndarray:
    """titles × sections TF-IDF cosines of each page's title with each section's heading
    (IDF over both): what a reader matches first. By its text, "Span: Safe Access to
    Contiguous Storage" (its lifetimes, ~Escapable) went under "Noncopyable and
    nonescapable types", and "Span and InlineArray" held only the pointer pages a
    first report found before Span existed."""
    return _cosines([terms(t) for t in titles], [terms(h) for _k, h, _b in sections])


def section_query(heading: str, question: str) -> str:
    """What a section is searched and scored as: the question's facet of that name (its
    words and the question's subject), else the heading with the question's subject. A
    bare heading is too little for a small embedding model ("Technologies" scored a
    sodium-ion technology page below "Costs and prices")."""
    for facet in facets_of(question):
        if facet.name.casefold() == heading.casefold():
            return facet.query
    return f"{heading} {subject_of(question)}"


def _standardised(matrix: np.ndarray) -> np.ndarray:
    return matrix if matrix.shape[0] < MIN_ROWS else standardised(matrix)


def place(
    docs: Sequence[tuple[str, str, str]],
    sections: Sequence[tuple[str, str, str]],
    *,
    known: Sequence[tuple[str, str]] = (),
    relevance: Any = None,
) -> dict[str, tuple[str | None, float]]:
    """url → (the section key it goes to, None when it fits none; its words cosine there)
    for ``docs`` (url, title, text). ``sections``: (key, heading, body), those without a
    heading left out; ``known``: (title, text) of the pages the report cites, the
    baseline each section's scores are standardised against; ``relevance``: a
    ``Relevance`` for the question (without one, words alone decide)."""
    targets = [(k, h, b) for k, h, b in sections if h]
    if not docs:
        return {}
    if not targets:
        return {url: (None, 0.0) for url, _t, _c in docs}
    pages = [(t, c) for _u, t, c in docs] + list(known)
    words = word_scores(pages, [(h, b) for _k, h, b in targets])
    # a title naming a section pulls its page there; one naming none changes nothing (a
    # standard score below the mean would push it from sections many titles name: the
    # sample's grant programme went from "Market rules and policy" to "Technologies")
    titles = np.maximum(_standardised(title_scores([t for t, _c in pages], targets)), 0.0)
    total = _standardised(words) + titles
    if relevance is not None:
        keyed = {str(i): page for i, page in enumerate(pages)}
        _whole, per = relevance.facet_scores(
            keyed, [section_query(h, relevance.question) for _k, h, _b in targets]
        )
        meaning = np.asarray([per[str(i)] for i in range(len(pages))], dtype=float)
        total = total + _standardised(meaning)
    out: dict[str, tuple[str | None, float]] = {}
    for i, (url, _t, _c) in enumerate(docs):
        best = int(np.argmax(total[i]))
        fits = float(words[i].max()) >= PLACE_MIN
        out[url] = (targets[best][0] if fits else None, float(words[i, best]))
    return out


def facet_fits(docs: Sequence[tuple[str, str, str]], question: str) -> dict[str, str | None]:
    """url → the name of the facet of ``question`` whose name ``docs`` (url, title,
    text) share most words with, at least PLACE_MIN of TF-IDF cosine; None for a page
    that fits none (and for every page of a question that names no facets).

    For the pages an update found that fit none of the report's sections. Each pair of
    them used to make a new section, named by the writer; in the Swift bench's updates
    with the fake model every such page was off the question ("Make Standard Library
    Index Types Hashable" in a report on generics: ``BENCHMARKS.md``). A facet's name,
    without the text of its section, is what the page must be about."""
    facets = facets_of(question)
    if not facets or not docs:
        return {url: None for url, _t, _c in docs}
    vocabulary = {w for f in facets for w in terms(f.name)}
    scores = word_scores(
        [(t, c) for _u, t, c in docs],
        [(f.name, "") for f in facets],
        spell=lambda w: _as_named(w, vocabulary),
    )
    out: dict[str, str | None] = {}
    for i, (url, _t, _c) in enumerate(docs):
        best = int(np.argmax(scores[i]))
        out[url] = facets[best].name if scores[i, best] >= PLACE_MIN else None
    return out


def _as_named(stem: str, named: set[str]) -> str:
    """``stem`` as a facet's name spells it when one begins the other and the shorter
    has at least STEM_PREFIX letters: the stemmer makes "schedul" of "Schedules" and
    "schedule" of "Release Schedule"."""
    if stem in named:
        return stem
    for word in named:
        if min(len(word), len(stem)) >= STEM_PREFIX and (
            stem.startswith(word) or word.startswith(stem)
        ):
            return word
    return stem


def missing_facets(
    question: str, sections: Sequence[tuple[str, str, str]], room: int
) -> list[tuple[str, str, str]]:
    """Places for new pages beside ``sections`` (key, heading, body): the parts of the
    question that have no section, each as (FACET_KEY + its name, its name, no body) —
    at most ``room`` of them (the sections the report may still add). A page placed in
    one opens that part's section. A section whose pages an update cut is gone; when
    pages about its part come later, they must not go to the nearest other part: a
    Swift concurrency report lost "Sendable and the move to strict" in 2019, and its
    Sendable pages of 2021 went to "Actors and isolation"."""
    if room < 1:
        return []
    names = [f.name for f, key in facet_sections(question, sections) if key is None]
    return [(FACET_KEY + name, name, "") for name in names[:room]]


def facet_sections(
    question: str, sections: Sequence[tuple[str, str, str]]
) -> list[tuple[Facet, str | None]]:
    """Each facet of ``question`` with the key of its section among ``sections`` (key,
    heading, body), or None when it has none: the section headed by its name, else the
    first whose heading holds every word of it — an analyst's own outline names the
    parts in its words ("Costs" → "Costs and prices", "Policies" → "Market rules and
    policy"). A section is one facet's."""
    facets = facets_of(question)
    exact = {heading.casefold(): key for key, heading, _b in sections if heading}
    found = {f.name: exact[f.name.casefold()] for f in facets if f.name.casefold() in exact}
    for facet in facets:
        words = set(terms(facet.name))
        if facet.name in found or not words:
            continue
        for key, heading, _b in sections:
            held = set(terms(heading))
            if key not in found.values() and all(_as_named(w, held) in held for w in words):
                found[facet.name] = key
                break
    return [(f, found.get(f.name)) for f in facets]


def facet_of(key: str | None) -> str | None:
    """The part of the question a placement key stands for (``missing_facets``), or None
    for a section's key."""
    if key is None or not key.startswith(FACET_KEY):
        return None
    return key[len(FACET_KEY) :]
