"""Discovery recall: a relevant page new in the update's window is surfaced (fetched as a
candidate) even when many window pages share more of the question's words and the search
ranks it below the first results; a window page off the question is not fetched."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import col, select

from core.bench.measure import candidates
from core.dates import parse_as_of
from core.db import session_scope
from core.evidence import _follow_ups
from core.models import Snapshot, Source
from core.relevance import interleave, rank_hits
from core.research import create_report
from core.sources.corpus import add_corpus
from core.update import update_report
from tests.conftest import write_jsonl

QUESTION = (
    "How is static typing in Python evolving: which type-system features were proposed, "
    "accepted, or finalised, and what is still open?"
)
BASE = "2024-03-01"  # the first report's pages
NEW = "2025-06-01"  # inside the update's window (2024-12-31, 2025-12-31]
FILLERS = 30  # window pages denser in the question's words than the relevant one
RELEVANT = "https://example.org/variadic-generics"
OFF_TOPIC = "https://example.org/garden-hours"


def _page(url: str, title: str, content: str, as_of: str) -> dict[str, str]:
    return {"url": url, "title": title, "content": content, "as_of": as_of}


def _records() -> list[dict[str, str]]:
    """Three typing pages for the first report; in the window, many pages repeating the
    question's words, one relevant page that uses them once, one page about a garden."""
    base = [
        _page(
            f"https://example.org/typing-{i}",
            f"Type hints for {name}",
            f"This proposal adds static typing for {name}. A type checker verifies the "
            f"annotations of {name}; the proposal was accepted and the feature finalised.",
            BASE,
        )
        for i, name in enumerate(["functions", "variables", "protocols"])
    ]
    fillers = [
        _page(
            f"https://example.org/static-typing-note-{i}",
            f"Static typing features proposed, note {i}",
            f"Static typing in Python is evolving: type-system features proposed, accepted, "
            f"finalised, still open. Static typing note number {i}, static typing features "
            f"proposed and accepted, finalised or still open.",
            NEW,
        )
        for i in range(FILLERS)
    ]
    relevant = _page(
        RELEVANT,
        "Variadic generics",
        "TypeVarTuple lets a generic class or function take any number of type parameters, "
        "so array shapes can be annotated and checked by a type checker. This brings "
        "variadic generics to static typing.",
        NEW,
    )
    off_topic = _page(
        OFF_TOPIC,
        "Garden rota",
        "The gate is open on Sundays in summer: bring gloves, seeds and a watering can for "
        "the tomato beds and the roses.",
        NEW,
    )
    return [*base, *fillers, relevant, off_topic]


def _surfaced(workspace: Path, tmp_path: Path) -> set[str]:
    """The pages the update's discovery fetched as candidates (its ``new`` snapshots)."""
    add_corpus("typing", write_jsonl(tmp_path / "typing.jsonl", _records()))
    made = create_report(QUESTION, as_of=parse_as_of("2024-12-31"), source="corpus:typing")
    run_id = update_report(made["report_id"], as_of=parse_as_of("2025-12-31"), approve_all=True)[
        "run_id"
    ]
    with session_scope() as s:
        return candidates(s, run_id)


def test_a_relevant_page_ranked_below_the_first_hits_is_surfaced(
    workspace: Path, tmp_path: Path
) -> None:
    surfaced = _surfaced(workspace, tmp_path)
    assert RELEVANT in surfaced  # it ranks below the probe's first 20 hits
    assert OFF_TOPIC not in surfaced  # in the window, but about a garden
    with session_scope() as s:
        fetched = s.exec(
            select(Source.url)
            .join(Snapshot, col(Snapshot.source_id) == Source.id)
            .where(col(Source.url).like("%static-typing-note%"))
        ).all()
    assert len(set(fetched)) == FILLERS  # the pages denser in its words are surfaced too


def test_hits_are_ranked_by_relevance_and_off_topic_ones_dropped() -> None:
    lists = [["notes", "garden", "generics"], ["generics"]]
    pages = {
        "notes": ("Static typing features proposed", "static typing features proposed"),
        "garden": ("Community garden opening hours", "the garden is open from May"),
        "generics": ("Variadic generics", "TypeVarTuple … static typing … type checker"),
    }
    assert interleave(lists) == ["notes", "generics", "garden"]  # each search's first hit
    ranked = rank_hits(QUESTION, lists, pages)
    assert ranked[:2] == ["notes", "generics"] and "garden" not in ranked


def test_a_question_without_facets_searches_each_section_theme() -> None:
    sections = [
        ("overview", "Overview", ""),
        ("key-facts", "Key facts", ""),
        ("type-hints", "Type Hints", "…"),
        ("generics", "Generics", "…"),
    ]
    queries = _follow_ups(QUESTION, sections)
    assert len(queries) == 2  # the derived sections (overview, key facts) are not themes
    assert queries[0].startswith("Type Hints static typing Python")
    facet_question = "What are the Python packaging standards (metadata, wheels, lock files)?"
    assert len(_follow_ups(facet_question, sections)) == 3  # one per facet instead
