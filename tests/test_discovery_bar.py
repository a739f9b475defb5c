"""Which new pages discovery keeps (``core.engine.discovery._relevant``): those ranked by
words and meaning, with relevance feedback, at least as well as the lower part of what the
report cites — not by meaning alone, which lets a C-API page about "static types" into a
typing report because a small static model scores it high."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from core.domain.relevance import RELEVANCE_MIN
from core.engine.discovery import _relevant


class Ranked:
    """Relevance whose scores are given: title → (by meaning, by words and meaning)."""

    def __init__(self, table: Mapping[str, tuple[float, float]]) -> None:
        self.table = table
        self.ranked: list[str] = []

    def page_scores(self, pages: Mapping[str, tuple[str, str]]) -> dict[str, float]:
        return {u: self.table[t][0] for u, (t, _c) in pages.items()}

    def scores(self, texts: list[str]) -> list[float]:
        return [self.table[t.split(".")[0]][0] for t in texts]

    def hybrid_scores(
        self, pages: Mapping[str, tuple[str, str]], semantic: Any = None, **_: Any
    ) -> dict[str, float]:
        self.ranked = sorted(pages)
        return {u: self.table[t][1] for u, (t, _c) in pages.items()}


def _page(title: str) -> SimpleNamespace:
    return SimpleNamespace(title=title, content=f"{title} text.")


def test_new_pages_are_kept_by_their_rank_against_what_the_report_cites() -> None:
    table = {f"typing {i}": (0.40, 0.30 + i / 100) for i in range(10)}  # cited: 0.30-0.39
    table.update(
        {
            "C API static types": (0.48, 0.25),  # high by meaning, ranked low
            "Variadic generics": (0.33, 0.34),  # lower by meaning, ranked among the cited
            "Off topic": (RELEVANCE_MIN - 0.01, 0.40),  # ranked high, meaningless
        }
    )
    relevance = Ranked(table)
    cited = [(f"typing {i}", "text") for i in range(10)]
    stored = [(t, _page(t)) for t in ("C API static types", "Variadic generics", "Off topic")]
    kept = [url for url, _snap in _relevant(relevance, cited, stored)]  # type: ignore[arg-type]
    assert kept == ["Variadic generics"]
    # the cited pages and the new ones are ranked together: feedback learns from both
    assert {"C API static types", "Variadic generics"} <= set(relevance.ranked)
    assert len(relevance.ranked) == 13


def test_with_nothing_cited_every_new_page_about_the_question_is_kept() -> None:
    relevance = Ranked({"A": (0.5, 0.1), "B": (0.3, 0.05), "C": (0.1, 0.3)})
    stored = [(t, _page(t)) for t in ("A", "B", "C")]
    kept = [url for url, _snap in _relevant(relevance, [], stored)]  # type: ignore[arg-type]
    assert set(kept) == {"A", "B"}
