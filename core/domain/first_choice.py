"""Which pages a first report uses: those scoring at least a share of the best candidate
(or, the best lexical answer to one facet's query, a smaller share of it), fused with the
search's order; a few per facet first, so that no facet goes unanswered; and which facet
each page is most about. Scores come from :mod:`core.domain.relevance`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from core.domain.relevance import FACET_HITS, FACET_SHARE, RELEVANCE_MIN, TOP_SHARE, fuse
from core.domain.vectors import leanings, standardised


def first_floor(scores: Sequence[float]) -> float:
    """The score a page needs to enter a first report: a share of the best candidate's
    (embedding scores differ by question, so no absolute value fits all), never below
    RELEVANCE_MIN."""
    return max(RELEVANCE_MIN, TOP_SHARE * max(scores, default=0.0))


def choice_floor(semantic: Mapping[str, float], candidates: int, limit: int) -> float:
    """The score a page needs to enter a first report: ``first_floor`` when there are
    more candidates than the report uses; with no more, nothing to choose between, and
    a small static model is not sure enough of a middling score to drop a page the
    search found: RELEVANCE_MIN."""
    if candidates <= limit:
        return RELEVANCE_MIN
    return first_floor(list(semantic.values()))


def first_choice(
    lexical: Mapping[str, int], semantic: Mapping[str, float], limit: int
) -> list[str]:
    """The pages a first report uses, most relevant first: ``lexical`` is each page's best
    position in the results of the planned queries (one per facet of the question),
    ``semantic`` its score against the whole question. A page is used when it scores at
    least TOP_SHARE of the best page, or — the best lexical answer to one of the queries,
    which a single embedding of the whole question underrates when the question has
    several facets — at least FACET_SHARE of it. With no more candidates than ``limit``
    there is nothing to choose between, and a small static model is not sure enough of
    a middling score to drop a page the search found: only pages below RELEVANCE_MIN go."""
    top = max(semantic.values(), default=0.0)
    order = sorted(lexical, key=lambda u: (lexical[u], u))
    floor = choice_floor(semantic, len(order), limit)

    def used(u: str) -> bool:
        score = semantic.get(u, 0.0)
        return score >= floor or (
            lexical[u] <= FACET_HITS and score >= max(RELEVANCE_MIN, FACET_SHARE * top)
        )

    return [u for u in fuse(order, semantic) if used(u)][:limit]


def facet_choice(
    facet_hits: Sequence[Sequence[str]],
    facet_scores: Mapping[str, Sequence[float]],
    whole: Mapping[str, float],
    ranked: Sequence[str],
    limit: int,
) -> list[str]:
    """The pages a first report uses when the question names facets: each facet's best
    pages first (its own search results fused with the pages' scores against it, those
    scoring at least TOP_SHARE of the facet's best page), a few per facet so that no
    facet goes unanswered; then ``ranked`` (the whole question's choice) up to ``limit``.
    ``facet_hits``: each facet query's results, best first; ``facet_scores``: url → its
    score against each facet; ``whole``: url → its score against the question."""
    n = len(facet_hits)
    if not n:
        return list(ranked)[:limit]
    quota = max(1, min(3, limit // (2 * n)))
    picks: list[list[str]] = []
    for i, hits in enumerate(facet_hits):
        mine = {u: facet_scores[u][i] for u in facet_scores}
        top = max(mine.values(), default=0.0)
        floor = max(RELEVANCE_MIN, TOP_SHARE * top)
        lexical = [u for u in hits if u in mine] + [u for u in mine if u not in set(hits)]
        picks.append(
            [
                u
                for u in fuse(lexical, mine)
                if mine[u] >= floor and whole.get(u, 0.0) >= RELEVANCE_MIN
            ][:quota]
        )
    out: list[str] = []
    for rank in range(quota):  # round robin: every facet's best page before any second
        for mine in picks:
            if rank < len(mine) and mine[rank] not in out:
                out.append(mine[rank])
    out.extend(u for u in ranked if u not in out)
    return out[:limit]


def assign(urls: Sequence[str], facet_scores: Mapping[str, Sequence[float]]) -> dict[str, int]:
    """url → the facet (index) each page is most about: the facet it leans to relative to
    its own scores (``leanings``: every facet query carries the question's subject, and a
    page about the subject scores high on all of them), standardised over the pages (raw
    scores are not comparable across facets: a broad facet, "metadata", scores every
    packaging page high). Standardised raw scores pushed a page away from a facet many
    pages share: unsafe-pointer pages went to "Noncopyable and nonescapable types" while
    "Unsafe pointer APIs" had many. Measured on the Swift bench's final reports, pages
    whose title names exactly one facet sat in that facet's section 56 of 79 times with
    raw scores, 61 of 76 with leanings (``BENCHMARKS.md``)."""
    rows = [u for u in facet_scores if facet_scores[u]]
    if not rows:
        return {}
    matrix = np.asarray([facet_scores[u] for u in rows], dtype=float)
    z = standardised(leanings(matrix))
    best = {u: int(np.argmax(z[i])) for i, u in enumerate(rows)}
    return {u: best[u] for u in urls if u in best}
