"""The search with a report's own words (``core.domain.feedback_query``) and its place in
discovery."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import col, select

from core.dates import parse_as_of
from core.domain.feedback_query import MIN_CITED, feedback_query
from core.engine import discovery
from core.engine.creation import create_report
from core.engine.update import update_report
from core.sources.corpus import Corpus, add_corpus
from core.store.db import session_scope
from core.store.models import Snapshot, Source
from tests.conftest import write_jsonl

TYPING = [
    ("Variadic Generics", "A type checker such as mypy accepts generic classes over tuples."),
    ("Literal Types", "Type checkers narrow a literal; mypy and pyright support literal types."),
    ("TypedDict", "A type checker checks each key; mypy treats TypedDict as a generic mapping."),
    ("Self Type", "Type checkers infer the self type; mypy reports a generic method."),
    ("Final qualifier", "Type checkers reject reassignment; mypy flags a final name."),
]
OTHERS = [
    ("Improving bugs.python.org", "The bug tracker moves to GitHub issues and labels."),
    ("Python 3.8 Release Schedule", "The release manager publishes the beta schedule."),
    ("WSGI 1.0.1", "A server calls the application with an environ mapping."),
]


def test_the_words_that_set_cited_pages_apart_from_the_rest_of_the_pool() -> None:
    words = feedback_query(TYPING, OTHERS, n=4).split()
    assert words == ["checkers", "mypy", "type", "generic"]
    # a word the uncited pages share as much is not what the topic is
    assert "mapping" not in words and "schedule" not in words


def test_words_are_spelled_as_the_pages_write_them() -> None:
    words = feedback_query(TYPING, OTHERS).split()
    assert "checkers" in words or "checker" in words
    assert not any(w.endswith("ie") for w in words)  # never a stem a search would not match


def test_too_few_cited_pages_say_nothing() -> None:
    assert feedback_query(TYPING[: MIN_CITED - 1], OTHERS) == ""
    assert feedback_query(TYPING, []) != ""  # no pool beyond the cited pages: still words


def test_the_fields_a_page_declares_are_not_its_topic() -> None:
    """Old PEPs carry "Content-Type: text/x-rst" and "Last-Modified" lines, and every
    page names its authors: the typing report's words were "rst revision date modified"
    and "jelle zijlstra" before header blocks were left out."""
    header = "PEP: 1\nAuthor: Jelle Zijlstra\nContent-Type: text/x-rst\nStatus: Final\n\n"
    cited = [(title, header + text) for title, text in TYPING]
    words = feedback_query(cited, OTHERS).split()
    assert {"checkers", "mypy"} <= set(words)
    assert not {"jelle", "zijlstra", "rst", "content", "author", "final"} & set(words)


def test_a_collection_sets_the_words_against_its_own_pages(workspace: Path, tmp_path: Path) -> None:
    """A report whose pool holds only its own kind of pages learns nothing from it; the
    collection's sample says what every page there says."""
    add_corpus("pool", write_jsonl(tmp_path / "pool.jsonl", _grid_records()))
    corpus = Corpus.open("pool")
    sample = discovery._background(corpus)
    assert len(sample) == len(_grid_records())  # the whole (small) collection
    assert discovery._background(corpus) is sample  # read once per collection revision
    assert discovery._background(object()) == []  # the web: no collection


# -- in an update's discovery -----------------------------------------------------------------
GRID_QUESTION = "How are grid batteries evolving?"
CHEMISTRIES = {
    "lfp": ("Lithium iron phosphate", "a phosphate cathode"),
    "flow": ("Vanadium flow", "vanadium in two tanks"),
    "sodium": ("Sodium ion", "a layered oxide cathode"),
    "zinc": ("Zinc bromine", "a zinc anode"),
    "lead": ("Lead carbon", "a carbon anode"),
    "nmc": ("Nickel manganese", "a nickel rich cathode"),
}


def _grid_records() -> list[dict]:
    def page(slug: str, title: str, as_of: str, text: str) -> dict:
        return {"url": f"https://ex.org/{slug}", "title": title, "as_of": as_of, "content": text}

    records = [
        page(
            slug,
            f"{name} grid batteries",
            "2024-01-01",
            f"{name} grid batteries store energy with {part} and a liquid electrolyte. "
            f"Their cells survive deep cycling, and the electrolyte sets how long the "
            f"cells last before the cathode wears.",
        )
        for slug, (name, part) in CHEMISTRIES.items()
    ]
    return [
        *records,
        # the window: one page the question's words find, one they cannot
        page(
            "solid",
            "Solid state grid batteries",
            "2024-06-01",
            "Solid state grid batteries replace the liquid electrolyte with a ceramic one.",
        ),
        page(
            "iron-air",
            "Iron air cells",
            "2024-06-01",
            "Iron air cells pair an iron anode with an air cathode in a water based "
            "electrolyte. The cells tolerate daily cycling and hold energy for a hundred hours.",
        ),
    ]


def _fetched_in(run_id: int) -> set[str]:
    with session_scope() as s:
        rows = s.exec(
            select(Source.url)
            .join(Snapshot, col(Snapshot.source_id) == Source.id)
            .where(Snapshot.run_id == run_id, Snapshot.change_kind == "new")
        ).all()
    return set(rows)


def test_an_update_finds_a_new_page_in_the_words_its_sources_use(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_corpus("grid", write_jsonl(tmp_path / "grid.jsonl", _grid_records()))
    reports = [
        create_report(GRID_QUESTION, as_of=parse_as_of("2024-02-01"), source="corpus:grid")
        for _ in range(2)
    ]
    assert all(made["sources"] >= MIN_CITED for made in reports)
    # without the search in the sources' words, the question's words miss the page
    with monkeypatch.context() as m:
        m.setattr(discovery, "feedback_query", lambda *_a, **_k: "")
        missed = update_report(reports[0]["report_id"], as_of=parse_as_of("2024-07-01"))
    fetched = _fetched_in(missed["run_id"])
    assert "https://ex.org/solid" in fetched and "https://ex.org/iron-air" not in fetched
    found = update_report(reports[1]["report_id"], as_of=parse_as_of("2024-07-01"))
    assert "https://ex.org/iron-air" in _fetched_in(found["run_id"])
