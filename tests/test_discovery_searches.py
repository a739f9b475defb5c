"""Which window searches an update makes (``core.engine.discovery._window_hits``): the
probe, then one search per facet of the question that the probe's new pages touch — a
facet whose section got none of them is not searched again (a quiet part of the
question costs nothing), and a facet the report has no section for yet always is. With
the words the report's cited pages share (``feedback_query``), the probe is followed by
one search with them, and only facets without a section are searched on their own."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import core.domain.relevance as relevance_module
from core.app import actions
from core.dates import parse_as_of
from core.domain.relevance import Relevance
from core.engine.discovery import WIDE, _new_in, _window_hits, new_hits
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
        self.fresh_first: list[bool] = []

    def __call__(self, query: str, k: int, fresh_first: bool = True) -> list[SearchResult]:
        self.asked.append(query)
        self.fresh_first.append(fresh_first)
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
    """A search provider whose window holds ``pages`` titles, best first; a page named
    in ``older`` first appeared before the window (it was only edited in it)."""

    name = "window"

    def __init__(self, pages: list[str], older: tuple[str, ...] = ()) -> None:
        self.pages = pages
        self.older = older

    def search(self, query: str, *, max_results: int, **_window: object) -> list[SearchResult]:
        return [
            SearchResult(f"u/{t}", t, t, None, 1.0, first_seen=BEFORE if t in self.older else None)
            for t in self.pages[:max_results]
        ]


WHEN = (datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 12, 31, tzinfo=UTC))
BEFORE = datetime(2019, 5, 1, tzinfo=UTC)


def test_a_window_search_counts_the_pages_new_to_the_report() -> None:
    """A busy window's first hits are pages the report already holds, edited in it: the
    search reads WIDE times the pages it keeps and keeps the first new ones."""
    held = [f"held {n}" for n in range(2 * WIDE)]
    window = Window([*held, "new a", "new b", "new c"])
    known = {f"u/{t}" for t in held}
    assert [h.title for h in new_hits(window, "q", 3, WHEN, known)] == ["new a", "new b", "new c"]
    assert [h.title for h in new_hits(window, "q", 2, WHEN, known)] == []
    assert [h.title for h in new_hits(window, "q", 3, WHEN, set())] == held[:3]


ON_TOPIC = [
    "Widget archive signing with detached signatures",
    "A new layout for widget archive metadata",
    "Widget archive layout version two",
]


def test_pages_new_in_the_window_come_before_pages_only_edited_in_it() -> None:
    """An update searches for what is new: an on-topic page that first appeared in the
    window comes before one the report never pooled that was only edited in it (it was
    there for earlier searches to find) — except in the search with the report's own
    words, which is how such older pages come back."""
    window = Window(ON_TOPIC, older=tuple(ON_TOPIC[:2]))
    relevance = Relevance(QUESTION)
    fresh = new_hits(window, QUESTION, 1, WHEN, set(), relevance)
    assert [h.title for h in fresh] == [ON_TOPIC[2]]
    by_rank = new_hits(window, QUESTION, 3, WHEN, set(), relevance, fresh_first=False)
    assert ON_TOPIC[2] != by_rank[0].title and {h.title for h in by_rank} == set(ON_TOPIC)


def test_a_date_without_a_zone_is_taken_as_utc() -> None:
    """Another provider may date a page without a zone; the window has one."""
    naive = SearchResult("u/n", "n", "n", None, 1.0, first_seen=datetime(2023, 5, 1))
    assert _new_in(naive, WHEN[0])
    assert not _new_in(naive, datetime(2023, 6, 1, tzinfo=UTC))


def test_a_new_page_off_the_question_does_not_come_first() -> None:
    """Being new does not make a page relevant: an off-topic page new in the window stays
    behind an on-topic one that was only edited in it."""
    window = Window([ON_TOPIC[0], OFF_TOPIC[0]], older=(ON_TOPIC[0],))
    found = new_hits(window, QUESTION, 1, WHEN, set(), Relevance(QUESTION))
    assert [h.title for h in found] == [ON_TOPIC[0]]


OFF_TOPIC = [
    "Cafeteria lunch menu for the spring term",
    "Parking permits for staff",
    "Opening hours of the library over the holidays",
    "Minutes of the garden committee",
    "Bus timetable changes in March",
    "The choir's winter concert",
]


def test_hits_are_ranked_again_by_meaning() -> None:
    """The search's own order is fused with the hits' meaning: an on-topic page the
    search ranked fourth comes into the first three."""
    pages = [*OFF_TOPIC[:3], ON_TOPIC[1], *OFF_TOPIC[3:]]
    window = Window(pages, older=tuple(pages))
    by_meaning = new_hits(window, QUESTION, 3, WHEN, set(), Relevance(QUESTION))
    assert ON_TOPIC[1] in [h.title for h in by_meaning]
    assert ON_TOPIC[1] not in [h.title for h in new_hits(window, QUESTION, 3, WHEN, set())]


def test_the_search_with_the_reports_own_words_does_not_put_new_pages_first() -> None:
    search = Searches([("Widget layout two", "a new widget archive layout moves metadata")])
    _window_hits(search, QUESTION, SECTIONS, set(), 5, WORDS)
    assert search.fresh_first == [True, False]


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


def test_a_quiet_update_loads_no_model(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing changed and nothing new: the update scores nothing, so a one-off CLI
    update pays no model load (discovery's ranking by meaning waits for a hit)."""
    actions.demo()

    def no_model(texts: object) -> object:
        raise AssertionError("the model was used")

    monkeypatch.setattr(relevance_module, "_embed", no_model)
    done = actions.update(1, as_of=parse_as_of("2026-01-20"))
    assert done.run_id
