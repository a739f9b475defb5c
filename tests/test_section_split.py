"""A full section's new pages open a section of their own, and a report at its
``max_sections`` makes room by letting its least relevant section go."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlmodel import select

from core.dates import parse_as_of
from core.domain.citations import cited_markers
from core.domain.source_plan import Budget, SourcePlan, section_to_yield, sections_to_split
from core.engine import stages
from core.engine.creation import create_report
from core.engine.evidence import Found
from core.engine.overview import DERIVED_KEYS
from core.engine.rationales import shortened
from core.engine.report_proposals import part_heading
from core.engine.review import get_run, proposals_of
from core.engine.section_proposals import section_case
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import PoolEntry, Source
from core.writers.base import Evidence, WriterFailed
from core.writers.offline import OfflineWriter
from tests.conftest import write_jsonl
from tests.test_prune import LAYOUT, MASCOT, SIGNING

# -- the rules -----------------------------------------------------------------------------


def test_a_section_splits_when_its_new_pages_would_take_it_over_its_budget() -> None:
    sections = {"a": (200, 4), "b": (100, 4), "c": (390, 3)}
    budget = Budget(words=400)
    # a: 200 + 4 × 50 = 400, not over; b: 100 + 5 × 25 under; c: 390 + 3 × 130 over
    assert sections_to_split(sections, {"a": 4, "b": 5, "c": 3}, budget, 2) == ["c"]
    assert sections_to_split(sections, {"a": 5, "c": 3}, budget, 2) == ["a", "c"]  # most first
    assert sections_to_split(sections, {"a": 5, "c": 3}, budget, 1) == ["a"]  # room for one
    assert sections_to_split(sections, {"c": 1}, budget, 2) == []  # one page goes into it
    assert sections_to_split(sections, {"c": 2}, budget, 2) == ["c"]  # two are a part of their own
    assert sections_to_split(sections, {"c": 9}, Budget(words=0), 2) == []  # no word budget


def test_the_least_relevant_section_gives_way_only_to_more_relevant_pages() -> None:
    ranks = {1: 0.5, 2: 0.45, 3: 0.2, 4: 0.25, 5: 0.1, 10: 0.4, 11: 0.42}
    sections = {"typing": [1, 2], "release": [3, 4], "shared": [5, 1]}
    # "shared" is least relevant, but its source 1 is cited elsewhere too: it cannot go whole
    assert section_to_yield(sections, ranks, [10, 11]) == "release"
    assert section_to_yield(sections, ranks, [10, 11], protected=[3]) is None  # the news stays
    assert section_to_yield(sections, ranks, [3]) is None  # the new pages are no better


def test_a_large_section_gives_way_only_when_every_source_is_less_relevant() -> None:
    """A Swift concurrency section of nine proposals held "Actors" (0.38) beside weaker
    pages; on their mean it was below four new pages and went whole, the report's core
    proposals with it. A section citing more sources than come in goes only when every
    one of them is less relevant."""
    ranks = {1: 0.38, 2: 0.23, 3: 0.22, 4: 0.25, 5: 0.33, 6: 0.3, 10: 0.39, 11: 0.35}
    sections = {"core": [1, 2, 3], "drift": [4, 5, 6]}
    # "core" is the least relevant on its mean (0.277 against 0.293), but "Actors" is not
    assert section_to_yield(sections, ranks, [10, 11]) == "drift"
    assert section_to_yield({"core": [1, 2, 3]}, ranks, [10, 11]) is None
    # as many come in as go: the mean decides
    assert section_to_yield({"core": [1, 2, 3]}, ranks, [10, 11, 5]) == "core"


def test_a_split_section_is_named_as_a_part_of_its_parent() -> None:
    pages = [
        Evidence(
            7, "https://ex.org/7", "Protocols: Structural subtyping (duck typing)", "", rank=0
        ),
        Evidence(8, "https://ex.org/8", "Literal Types", "", rank=1),
    ]
    q = "How is static typing in Python evolving?"
    assert part_heading("Type hints", "Structural subtyping protocols", pages, q) == (
        "Type hints: Structural subtyping protocols"
    )
    # a list of title words, or a lone word the parent already says: the best page's title
    assert part_heading("Type hints", "Generic and typing", pages, q) == "Type hints: Protocols"
    assert part_heading("Type hints", "Typing", pages, q) == "Type hints: Protocols"
    # a part of a part is named within the root
    assert part_heading("Type hints: Protocols", "Typing", pages[1:], q) == (
        "Type hints: Literal Types"
    )
    # a page titled as the parent names no part of it: the next one does
    same = Evidence(9, "https://ex.org/9", "Type Hints", "", rank=0)
    assert part_heading("Type hints", "Typing", [same, pages[1]], q) == "Type hints: Literal Types"


def test_a_part_is_never_named_as_a_section_the_report_has() -> None:
    """A metaprogramming report split "Macro system" twice in two years, and both parts
    were headed "Macro system: Package Manager"."""
    q = "Which Swift features for metaprogramming have been proposed: the macro system?"
    pages = [
        Evidence(3, "https://ex.org/3", "Package Manager Tools Version", "", rank=0),
        Evidence(4, "https://ex.org/4", "Package Manager Product Definitions", "", rank=1),
    ]
    first = part_heading("Macro system", "Add, manager and package", pages, q)
    assert first == "Macro system: Package Manager"
    taken = ["Macro system", "macro system: package manager"]
    again = part_heading("Macro system", "Add, manager and package", pages, q, taken)
    assert again == "Macro system: Package Manager Tools Version"
    # every name taken: the next page's title, whole
    taken.append(again)
    last = part_heading("Macro system", "Add, manager and package", pages[1:], q, taken)
    assert last == "Macro system: Package Manager Product Definitions"


def test_a_new_section_is_never_headed_as_one_the_report_has() -> None:
    """The writer's outline for pages no section takes may name one the report has: the
    new one becomes a part of it, named after its own pages."""
    from core.engine.report_proposals import _distinct
    from core.writers.base import OutlineItem

    pages = [
        Evidence(5, "https://ex.org/5", "Storage Investment Credit", "", rank=0),
        Evidence(6, "https://ex.org/6", "Grid code for storage", "", rank=1),
    ]
    outline = [OutlineItem("Market rules", 2, (5,)), OutlineItem("Grid codes", 2, (6,))]
    out = _distinct(outline, pages, "What market rules apply to storage?", ["Market rules"])
    assert [o.heading for o in out] == ["Market rules: Storage Investment Credit", "Grid codes"]
    assert [o.markers for o in out] == [(5,), (6,)]


# -- through an update ---------------------------------------------------------------------
QUESTION = "How is the Widget packaging format evolving: archive layout, signing?"


def _page(slug: str, as_of: str, title: str, text: str) -> dict:
    return {
        "url": f"https://ex.org/{slug}",
        "title": title,
        "as_of": as_of,
        "content": f"Title: {title}\nStatus: Draft\n\n{text}",
    }


MIRRORS = (
    "Widget archive mirrors copy each widget archive to servers in many countries. "
    "Volunteers run the widget archive mirrors that installers download packages from. "
)
NEW_SIGNING = {
    "rotation": "Widget packaging format archive signing now rotates the signing key of archives. "
    "Installers verify a widget archive signature against both the old and new signing key. ",
    "transparency": "Widget packaging format archive signing adds a signature transparency log. "
    "Installers verify that a widget archive signature appears in the signing transparency log. ",
    "timestamps": "Widget packaging format archive signing adds a timestamp to each signature. "
    "Installers verify the widget archive signature timestamp before the signing key expires. ",
}


def _widget_corpus(tmp_path: Path, *extra: dict) -> None:
    """The widget pages of 2024-01-01 (and ``extra``), three new signing pages after."""
    records = [
        _page("layout", "2024-01-01", "Widget archive layout", LAYOUT),
        _page("signing", "2024-01-01", "Widget archive signing", SIGNING),
        _page("mirrors", "2024-01-01", "Widget archive mirrors", MIRRORS),
        *extra,
        *(
            _page(slug, "2024-06-01", f"Widget archive signing {slug}", text)
            for slug, text in NEW_SIGNING.items()
        ),
    ]
    add_corpus("ws", write_jsonl(tmp_path / "ws.jsonl", records))


def _signing_report(tmp_path: Path) -> int:
    """A report whose "Signing" section is full, and three new signing pages after it."""
    _widget_corpus(tmp_path)
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-02-01"),
        source="corpus:ws",
        settings={"max_section_words": 50},
    )
    return int(made["report_id"])


def test_new_pages_for_a_full_section_get_a_section_of_their_own(
    workspace: Path, tmp_path: Path
) -> None:
    result = update_report(_signing_report(tmp_path), as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        added = [p for p in props if p.action == "add" and p.level >= 1 and p.heading]
        signing = next(p for p in props if p.heading == "Signing")
        assert [p.heading.split(": ")[0] for p in added] == ["Signing"], [
            (p.heading, p.action, p.rationale) for p in props
        ]
        assert "a section of their own" in added[0].rationale
        assert added[0].heading.startswith("Signing: Widget archive signing ")
        assert f"“{added[0].heading}”" in signing.rationale  # where its new pages went
        assert "nothing new was found" not in signing.rationale
        assert added[0].decision == "pending"
        # the full section is left as it was: its new pages went to the new one
        assert signing.action == "keep"
        assert len(set(cited_markers(added[0].new_text or ""))) >= 2


def _update_without_an_outline(report_id: int, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Update the report with a writer that cannot plan new sections."""

    def fails(*_args: object, **_kwargs: object) -> None:
        raise WriterFailed("the model's outline was not JSON")

    monkeypatch.setattr(OfflineWriter, "propose_outline", fails)
    return update_report(report_id, as_of=parse_as_of("2024-07-01"))


def test_a_split_the_writer_cannot_plan_is_flagged_and_the_pages_stay_pooled(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_id = _signing_report(tmp_path)
    result = _update_without_an_outline(report_id, monkeypatch)
    with session_scope() as s:
        flags = get_run(s, result["run_id"]).summary["flags"]
        assert any("are more than “Signing” holds" in f for f in flags), flags
        props = proposals_of(s, result["run_id"])
        assert not [p for p in props if p.action == "add" and p.level >= 1 and p.heading]
        pooled = s.exec(
            select(Source.url).join(PoolEntry).where(PoolEntry.report_id == report_id)
        ).all()
        assert {f"https://ex.org/{slug}" for slug in NEW_SIGNING} <= set(pooled)


def test_a_new_page_the_budget_cuts_is_named_by_its_title() -> None:
    """The budget may cut a new page's sentences from the section it was put in; the
    rationale names it by its title (it said "source [N]": only cited pages' titles were
    looked up)."""
    section = SimpleNamespace(key="s", heading="Signing", level=2, body="")
    page = Evidence(7, "https://ex.org/rotation", "Widget archive signing rotation", "Text.")
    run = SimpleNamespace(as_of=datetime(2024, 7, 1))
    d = SimpleNamespace(by_marker={}, plan=SourcePlan({}, {}, set(), {}), run=run)
    case = section_case(d, section, [Found(page, None)], 0, [])  # type: ignore[arg-type]
    assert shortened([7], case.titles, Budget(words=50)) == [
        "Shortened to the section's budget of 50 words: dropped sentences of its least "
        "relevant sources (Widget archive signing rotation [7])."
    ]


DRAWINGS = (
    "Volunteers sketched the widget mascot owl in pencil before the conference shirts. "
    "The owl drawings of the widget mascot hang in the community's conference hall. "
)


def _crowded_report(tmp_path: Path, *extra: dict) -> int:
    """A report at its ``max_sections``, two themes (no facets in its question: any
    section may give way), and three new signing pages after it (and ``extra``)."""
    _widget_corpus(
        tmp_path,
        _page("mascot", "2024-01-01", "Widget mascot owl", MASCOT),
        _page("drawings", "2024-01-01", "Widget mascot owl drawings", DRAWINGS),
        *extra,
    )
    made = create_report(
        "How is the Widget packaging format evolving?",
        as_of=parse_as_of("2024-02-01"),
        source="corpus:ws",
        settings={"max_section_words": 50, "max_sections": 2},
    )
    return int(made["report_id"])


def test_a_section_gives_way_to_a_split_when_the_report_has_no_room(
    workspace: Path, tmp_path: Path
) -> None:
    result = update_report(_crowded_report(tmp_path), as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        gone = [p for p in props if p.action == "remove"]
        added = [p for p in props if p.action == "add" and p.level >= 1 and p.heading]
        assert len(gone) == 1 and len(added) == 1, [(p.heading, p.action) for p in props]
        assert "makes room for a new one" in (gone[0].rationale or "")


def test_a_split_the_writer_cannot_plan_takes_no_section_s_place(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The section that was to give way keeps its sources when the split is not written."""
    report_id = _crowded_report(tmp_path)
    result = _update_without_an_outline(report_id, monkeypatch)
    with session_scope() as s:
        flags = get_run(s, result["run_id"]).summary["flags"]
        assert any("no new section could be planned" in f for f in flags), flags
        props = proposals_of(s, result["run_id"])
        assert [p.heading for p in props if p.action in ("remove", "add") and p.level >= 1] == []
        assert not any("makes room" in (p.rationale or "") for p in props)


def test_new_pages_are_placed_only_in_the_report_s_own_sections(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overview and key facts are rebuilt from the other sections: a new page placed
    in one of them reached no writer and no review (12% of the Swift bench's new pages
    were lost so, most to the key-facts table, whose titles match new pages' titles)."""
    report_id = _signing_report(tmp_path)
    offered: list[str] = []

    def discover(*_args: object, sections: list[tuple[str, str, str]], **_kw: object) -> list:
        offered.extend(key for key, _heading, _body in sections)
        return []

    monkeypatch.setattr(stages, "discover", discover)
    update_report(report_id, as_of=parse_as_of("2024-07-01"))
    assert offered and not set(offered) & set(DERIVED_KEYS), offered


BADGES = (
    "The widget packaging format mascot owl now appears on widget archive badges too. "
    "Volunteers drew the widget mascot owl for the widget packaging format conference. "
)


def test_a_section_that_gives_way_takes_no_new_page_and_goes(
    workspace: Path, tmp_path: Path
) -> None:
    """The section chosen to make room gets a new page of its own in the same update: the
    page goes to another section, so the report keeps to its ``max_sections`` (the Swift
    bench's metaprogramming report had 7 sections of 6)."""
    report_id = _crowded_report(
        tmp_path, _page("badges", "2024-06-01", "Widget mascot owl badges", BADGES)
    )
    result = update_report(report_id, as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        gone = [p for p in props if p.action == "remove"]
        kept = [
            p
            for p in props
            if p.action != "remove" and p.level >= 1 and p.heading and p.key not in DERIVED_KEYS
        ]
        assert len(gone) == 1, [(p.heading, p.action, p.rationale) for p in props]
        assert len(kept) <= 2, [(p.heading, p.action) for p in kept]
        cited = {m for p in kept for m in cited_markers(p.new_text or "")}
        badges = s.exec(select(PoolEntry).join(Source).where(Source.url == "https://ex.org/badges"))
        assert any(e.marker in cited for e in badges)  # the new page still went somewhere
