"""A source the budget removes says which kept source it ranks below and by how much, in
figures an analyst can check on the Review card."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from core.domain import source_plan
from core.domain.relevance import Relevance
from core.domain.source_plan import Budget, plan_sources

QUESTION = "How are widgets changing: layout, signing and colours?"


def _pages(n: int) -> dict[int, tuple[str, str]]:
    return {m: (f"Widget page {m}", f"text of page {m}") for m in range(1, n + 1)}


@pytest.fixture
def ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages ranked by their number (1 best)."""

    def scores(_relevance: Relevance, pages: Mapping[int, tuple[str, str]]):
        rank = {m: 1.0 - m / 100 for m in pages}
        return rank, rank

    monkeypatch.setattr(source_plan, "_scores", scores)


@pytest.mark.usefixtures("ranked")
def test_a_budget_cut_names_the_least_relevant_source_kept() -> None:
    plan = plan_sources(QUESTION, _pages(12), {}, {}, Budget(sources=10))
    assert set(plan.cuts) == {11, 12}
    why = plan.cuts[11]
    assert why.startswith("less relevant than the 10 sources the report's budget keeps")
    assert "\u201cWidget page 10\u201d [10], ranks 0.900 for the question, this one 0.890" in why
    assert plan.reasons([11], {11: "Widget page 11"}) == [f"Removed Widget page 11 [11]: {why}."]
