"""Which window searches an update makes (``core.engine.discovery._window_hits``): the
probe, then one search per facet of the question that the probe's new pages touch — a
facet whose section got none of them is not searched again (a quiet part of the
question costs nothing), and a facet the report has no section for yet always is. With
the words the report's cited pages share (``feedback_query``), the probe is followed by
one search with them, and only facets without a section are searched on their own."""

from __future__ import annotations

from datetime import datetime

from core.engine.discovery import _window_hits, new_hits
from core.sources.base import SearchResult

QUESTION = "What are the widget packaging standards (archive layout, signing, mascots)?"
SECTIONS = [
    ("s1", "Archive layout", "The widget archive layout puts metadata in a folder [1]."),
    ("s2", "Signing", "Widget archives carry a detached signature file [2]."),
    ("s3", "Mascots", "The widget mascot is a cartoon owl [3]."),
]


class Searches:
    """Window searches that record their queries; the probe finds ``probe`` pages."""

    def __init__(self, probe: list[tuple[str, str]]) -> None:
        self.probe = probe
        self.asked: list[str] = []

    def __call__(self, query: str, k: int) -> list[SearchResult]:
        self.asked.append(query)
        found = self.probe if len(self.asked) == 1 else []
        return [SearchResult(f"u/{t}", t, s, None, 1.0) for t, s in found]


def test_only_the_facets_the_probe_touches_are_searched_again() -> None:
    search = Searches([("Widget layout two", "a new widget archive layout moves metadata")])
    _window_hits(search, QUESTION, SECTIONS, set(), 5)
    assert search.asked[0] == QUESTION
    assert len(search.asked) == 2 and search.asked[1].startswith("archive layout")


def test_a_facet_without_a_section_is_always_searched() -> None:
    search = Searches([("Widget layout two", "a new widget archive layout moves metadata")])
    _window_hits(search, QUESTION, SECTIONS[:2], set(), 5)
    assert [q.split()[0] for q in search.asked[1:]] == ["archive", "mascots"]


def test_a_quiet_window_is_one_search() -> None:
    search = Searches([])
    _window_hits(search, QUESTION, SECTIONS, set(), 5)
    assert search.asked == [QUESTION]


class Window:
    """A search provider whose window holds ``pages`` titles, best first."""

    name = "window"

    def __init__(self, pages: list[str]) -> None:
        self.pages = pages

    def search(self, query: str, *, max_results: int, **_window: object) -> list[SearchResult]:
        return [SearchResult(f"u/{t}", t, t, None, 1.0) for t in self.pages[:max_results]]


def test_a_window_search_counts_the_pages_new_to_the_report() -> None:
    """A busy window's first hits are pages the report already holds, edited in it: the
    search reads WIDE times the pages it keeps and keeps the first new ones."""
    held = [f"held {n}" for n in range(4)]
    window = Window([*held, "new a", "new b", "new c"])
    when = (datetime(2023, 1, 1), datetime(2023, 12, 31))
    known = {f"u/{t}" for t in held}
    assert [h.title for h in new_hits(window, "q", 2, when, known)] == ["new a", "new b"]
    assert [h.title for h in new_hits(window, "q", 1, when, known)] == []
    assert [h.title for h in new_hits(window, "q", 3, when, set())] == held[:3]


WORDS = "widget archive signature manifest"  # what the report's cited pages share


def test_with_the_reports_own_words_a_facet_with_a_section_is_not_searched_again() -> None:
    search = Searches([("Widget layout two", "a new widget archive layout moves metadata")])
    _window_hits(search, QUESTION, SECTIONS, set(), 5, WORDS)
    assert search.asked == [QUESTION, WORDS]


def test_with_the_reports_own_words_a_facet_without_a_section_is_still_searched() -> None:
    search = Searches([("Widget layout two", "a new widget archive layout moves metadata")])
    _window_hits(search, QUESTION, SECTIONS[:2], set(), 5, WORDS)
    assert search.asked[:2] == [QUESTION, WORDS]
    assert [q.split()[0] for q in search.asked[2:]] == ["mascots"]


def test_a_quiet_window_is_one_search_whatever_the_words() -> None:
    search = Searches([])
    _window_hits(search, QUESTION, SECTIONS, set(), 5, WORDS)
    assert search.asked == [QUESTION]
