"""No central source is pruned: a page among the best few for the question or for one of
its facets outranks every other page when the budget cuts, and a cut names the kept source
it ranks below and by how much."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from core.domain import source_plan
from core.domain.relevance import Relevance
from core.domain.source_plan import CENTRAL, Budget, plan_sources

QUESTION = "How are widgets changing: layout, signing and colours?"


def _pages(n: int) -> dict[int, tuple[str, str]]:
    return {m: (f"Widget page {m}", f"text of page {m}") for m in range(1, n + 1)}


@pytest.fixture
def ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages ranked by their number for the question (1 best); page 12 is the best page
    for the facet "signing" and the worst for the question and the other facets."""

    def scores(_relevance: Relevance, pages: Mapping[int, tuple[str, str]]):
        rank = {m: 1.0 - m / 100 for m in pages}
        return rank, rank

    def facet_scores(
        _self: Relevance, pages: Mapping[str, tuple[str, str]], queries: Sequence[str]
    ):
        per = {
            u: [
                1.0 - int(u) / 100 if "signing" not in q else (0.9 if u == "12" else 0.1)
                for q in queries
            ]
            for u in pages
        }
        return {u: 1.0 - int(u) / 100 for u in pages}, per

    monkeypatch.setattr(source_plan, "_scores", scores)
    monkeypatch.setattr(Relevance, "facet_scores", facet_scores)


@pytest.mark.usefixtures("ranked")
def test_the_budget_never_cuts_the_best_page_of_a_facet() -> None:
    pages = _pages(12)
    plan = plan_sources(QUESTION, pages, {}, {}, Budget(sources=10))
    assert 12 not in plan.cuts and 12 in plan.central  # last for the question, first for "signing"
    assert set(plan.cuts) == {10, 11}  # the weakest of the others go instead
    why = plan.cuts[11]
    assert why.startswith("less relevant than the 10 sources the report's budget keeps")
    # names the kept source it ranks below (not the central one), with both figures
    assert "\u201cWidget page 9\u201d [9], ranks 0.910 for the question, this one 0.890" in why


@pytest.mark.usefixtures("ranked")
def test_central_pages_beyond_the_budget_still_yield_to_it() -> None:
    pages = _pages(CENTRAL + 2)
    plan = plan_sources(QUESTION, pages, {}, {}, Budget(sources=3))
    assert len(pages) - len(plan.cuts) == 3  # a ceiling holds even among central pages
