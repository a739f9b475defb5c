"""New pages and the parts of the question: a page about a part the report has no
section for opens that part's section; a page about none of the parts, which fits none
of the report's sections either, is not written up (it stays in the evidence pool)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from core.dates import parse_as_of
from core.domain.citations import cited_markers
from core.domain.placement import (
    FACET_KEY,
    facet_fits,
    facet_of,
    facet_sections,
    missing_facets,
)
from core.engine import research, stages
from core.engine.creation import create_report
from core.engine.evidence import Found
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import Report
from core.store.repository import get_version, sections_of
from core.writers.base import Evidence
from tests.conftest import write_jsonl
from tests.helpers.corpus import page
from tests.test_prune import LAYOUT, MASCOT, SIGNING

RELEASES = "How does the release cycle work (schedules, end-of-life dates, support periods)?"


# -- the rules -----------------------------------------------------------------------------


def test_a_page_fits_the_part_of_the_question_its_words_name() -> None:
    fits = facet_fits(
        [
            ("a", "Python 1.6 Release Schedule", "The release schedule lists the dates."),
            ("b", "Widget mascot owl", MASCOT),
            ("c", "End of life", "Each version reaches its end-of-life date after five years."),
        ],
        RELEASES,
    )
    # "Schedule" is "schedules": the stemmer spells the two apart, the match does not
    assert fits == {"a": "Schedules", "b": None, "c": "End-of-life dates"}


def test_a_question_without_parts_fits_no_page_to_one() -> None:
    docs = [("a", "Python 1.6 Release Schedule", "The release schedule lists the dates.")]
    assert facet_fits(docs, "How does the Python release cycle work?") == {"a": None}


def test_the_parts_without_a_section_are_places_for_new_pages_while_there_is_room() -> None:
    sections = [("s1", "Schedules", "…"), ("s2", "Key facts", "…")]
    places = missing_facets(RELEASES, sections, room=5)
    assert [heading for _key, heading, _body in places] == ["End-of-life dates", "Support periods"]
    assert all(body == "" for _key, _heading, body in places)
    assert [facet_of(key) for key, _h, _b in places] == ["End-of-life dates", "Support periods"]
    assert len(missing_facets(RELEASES, sections, room=1)) == 1
    assert missing_facets(RELEASES, sections, room=0) == []
    assert facet_of("s1") is None and facet_of(None) is None
    assert facet_of(FACET_KEY + "Support periods") == "Support periods"


# -- through an update ---------------------------------------------------------------------
QUESTION = "How is the Widget packaging format evolving: archive layout, signing?"
LAYOUT_MORE = (
    "The widget archive layout keeps package metadata and the package contents apart. "
    "Tools that read the widget archive layout find the metadata folder first. "
)
NEW_SIGNING = (
    "Widget packaging format archive signing now rotates the signing key of archives. "
    "Installers verify a widget archive signature against both the old and new signing key. "
)


def _page(slug: str, as_of: str, title: str, text: str) -> dict:
    return page(slug, title, as_of, f"Title: {title}\nStatus: Draft\n\n{text}")


def _report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *later: dict) -> int:
    """A report on the widget format whose pages are all about its archive layout (it has
    no "Signing" section), and the pages that come after it."""
    records = [
        _page("layout", "2024-01-01", "Widget archive layout", LAYOUT),
        _page("layout-more", "2024-01-01", "Widget archive layout folders", LAYOUT_MORE),
        *later,
    ]
    add_corpus("ws", write_jsonl(tmp_path / "ws.jsonl", records))
    with monkeypatch.context() as m:  # every page leans to the first part
        m.setattr(research, "assign", lambda urls, _scores: dict.fromkeys(urls, 0))
        made = create_report(QUESTION, as_of=parse_as_of("2024-02-01"), source="corpus:ws")
    return int(made["report_id"])


def test_pages_on_a_part_without_a_section_open_that_part_s_section(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_id = _report(
        tmp_path,
        monkeypatch,
        _page("signing", "2024-06-01", "Widget archive signing", SIGNING),
        _page("rotation", "2024-06-01", "Widget archive signing key rotation", NEW_SIGNING),
    )
    with session_scope() as s:
        version = get_version(s, s.get(Report, report_id))
        assert "Signing" not in [x.heading for x in sections_of(s, version.id)]
    result = update_report(report_id, as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        added = [p for p in props if p.action == "add" and p.level >= 1]
        assert [p.heading for p in added] == ["Signing"], [(p.heading, p.action) for p in props]
        assert "a part of the question the report had no section for" in added[0].rationale
        assert cited_markers(added[0].new_text or "")
        assert all("signing" in e["title"] for e in added[0].evidence or []), added[0].evidence


def test_a_page_on_no_part_of_the_question_is_not_written_up() -> None:
    """A new page that fits none of the report's sections and names none of the
    question's parts: in the Swift bench, all 25 such pages were off the question."""
    sections = [SimpleNamespace(key="layout", heading="Archive layout", level=2, body=LAYOUT)]
    mascot = Found(Evidence(5, "https://ex.org/mascot", "Widget mascot owl", MASCOT), None)
    signing = Found(Evidence(6, "https://ex.org/signing", "Widget archive signing", SIGNING), None)
    layout = Found(Evidence(7, "https://ex.org/folders", "Archive layout folders", LAYOUT), None)
    u = SimpleNamespace(
        report=SimpleNamespace(query=QUESTION),
        cfg={"max_sections": 6},
        own=sections,
        found=[mascot, signing, layout],
        flags=[],
        facet_pages={},
    )
    assigned: dict = {}
    stages._by_facet(u, [mascot, signing, layout], assigned)  # type: ignore[arg-type]
    assert assigned == {"layout": [layout]}  # its part has a section: there
    assert u.facet_pages == {"Signing": [signing]}  # its part has none: a new section
    assert u.found == [signing, layout]  # the mascot goes to no writer
    assert u.flags == [
        "1 new page is about none of the question's parts and was not written up; it stays "
        "in the evidence pool: “Widget mascot owl”"
    ]


def test_the_run_names_every_page_it_leaves_out() -> None:
    owl = Found(Evidence(5, "https://ex.org/owl", "Widget mascot owl", MASCOT), None)
    shirts = Found(Evidence(6, "https://ex.org/shirts", "Conference shirts", MASCOT), None)
    u = SimpleNamespace(
        report=SimpleNamespace(query=QUESTION),
        cfg={"max_sections": 6},
        own=[],
        found=[owl, shirts],
        flags=[],
        facet_pages={},
    )
    stages._by_facet(u, [owl, shirts], {})  # type: ignore[arg-type]
    assert u.found == []
    assert u.flags == [
        "2 new pages are about none of the question's parts and were not written up; they "
        "stay in the evidence pool: “Widget mascot owl”, “Conference shirts”"
    ]


def test_a_part_without_a_section_opens_one_only_while_there_is_room() -> None:
    sections = [SimpleNamespace(key="layout", heading="Archive layout", level=2, body=LAYOUT)]
    signing = Found(Evidence(6, "https://ex.org/signing", "Widget archive signing", SIGNING), None)
    u = SimpleNamespace(
        report=SimpleNamespace(query=QUESTION),
        cfg={"max_sections": 1},  # the report is full
        own=sections,
        found=[signing],
        flags=[],
        facet_pages={},
    )
    assigned: dict = {}
    stages._by_facet(u, [signing], assigned)  # type: ignore[arg-type]
    assert u.facet_pages == {} and assigned == {"layout": [signing]}  # the closest section


def test_an_analysts_own_headings_are_the_parts_they_name() -> None:
    """An imported report heads its sections in its own words: "Costs and prices" is the
    Costs part's section, "Market rules and policy" the Policies part's. Were they not, a
    page about costs would open a second "Costs" section beside "Costs and prices"."""
    question = (
        "Where does grid-scale battery energy storage stand: which technologies, what "
        "costs, which deployments, and which policies shape it?"
    )
    sections = [
        ("t", "Technologies", ""),
        ("c", "Costs and prices", ""),
        ("d", "Deployments and project pipeline", ""),
        ("p", "Market rules and policy", ""),
        ("s", "Safety", ""),
    ]
    found = {f.name: key for f, key in facet_sections(question, sections)}
    assert found == {"Technologies": "t", "Costs": "c", "Deployments": "d", "Policies": "p"}
    assert missing_facets(question, sections, room=2) == []
    # a section headed by the part's very name comes first; each section is one part's
    both = [("x", "Costs of storage", ""), ("y", "Costs", "")]
    assert dict((f.name, k) for f, k in facet_sections("Storage: costs, risks?", both)) == {
        "Costs": "y",
        "Risks": None,
    }
