"""The top of a report: an answer paragraph and a "Key facts" table built from what the
sections cite — every row cited and anchored, rebuilt first when a status changes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from sqlmodel import Session, select

from core.dates import parse_as_of
from core.domain.report_state import SectionDoc
from core.domain.sentences import cited_sentences
from core.engine.creation import create_report
from core.engine.overview import (
    DERIVED_KEYS,
    KEY_FACTS_KEY,
    OVERVIEW_KEY,
    FactRow,
    Since,
    derived_sections,
    fact_rows,
    key_facts_body,
    status_changes,
    status_count,
    table_statuses,
)
from core.engine.review import commit_run, get_run, proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import Claim, Section
from core.store.repository import get_report, get_version, load_doc
from tests.conftest import write_jsonl

PEP_LIKE = (
    "PEP: 9\nTitle: Widgets\nStatus: Accepted\nType: Standards Track\n"
    "Resolution: `24-Oct-2023 <https://example.org/t/1>`__\n\nBody text here.\n"
)
SWIFT_LIKE = (
    "# Structured widgets\n\n* Proposal: SE-0001\n"
    "* Status: **Implemented (Swift 5.5)** ([Acceptance post](https://example.org/a))\n"
    "* Review Manager: Someone\n\nBody text.\n"
)


def test_rows_read_the_declared_status_and_the_decision_date_of_any_layout() -> None:
    rows = fact_rows(
        [2, 1, 3],
        {1: ("Widgets", PEP_LIKE), 2: ("Structured widgets", SWIFT_LIKE), 3: ("Plain", "Text.")},
    )
    assert rows == [
        FactRow(2, "Structured widgets", "Implemented (Swift 5.5)", ""),
        FactRow(1, "Widgets", "Accepted", "24-Oct-2023"),
    ]
    table = key_facts_body(rows)
    assert table.splitlines()[0] == "| Item | Status | Since |"
    assert "| Widgets | Accepted [1] | 24-Oct-2023 |" in table
    assert "| Structured widgets | Implemented (Swift 5.5) [2] | — |" in table


def test_a_few_decision_dates_stand_in_their_status_cells_not_a_column_of_dashes() -> None:
    rows = [FactRow(1, "Widgets", "Accepted", "24-Oct-2023")]
    rows += [FactRow(i, f"Item {i}", "Final", "") for i in (2, 3)]
    table = key_facts_body(rows)
    assert table.splitlines()[0] == "| Item | Status |" and "—" not in table
    assert "| Widgets | Accepted since 24-Oct-2023 [1] |" in table
    assert "| Item 2 | Final [2] |" in table


def test_a_link_is_not_a_date() -> None:
    page = "Title: W\nStatus: Final\nType: X\nResolution: https://example.org/t/2023/5\n\nText."
    assert fact_rows([1], {1: ("W", page)})[0].since == ""


def test_the_status_count_reads_as_a_sentence() -> None:
    rows = [FactRow(i, f"I{i}", s, "") for i, s in enumerate(["Final", "Final", "Draft"])]
    assert status_count(rows) == "Of the 3 items tracked below, 2 are Final and 1 Draft."
    assert status_count(rows[:1]) == "The one item tracked below is Final."
    assert status_count([]) == ""
    long = [
        FactRow(1, "A", "In construction since 14 September 2026", ""),
        FactRow(2, "B", "In construction", ""),
    ]
    assert status_count(long) == "Both items tracked below are In construction."
    assert status_count(rows[:2] * 2) == "All 4 items tracked below are Final."
    mixed = [
        FactRow(1, "A", "Final", ""),
        FactRow(2, "B", "Financial investment decision reached", ""),
    ]
    assert status_count(mixed) == (
        "Status of the 2 items tracked below: Final (1), Financial investment decision reached (1)."
    )


def test_the_overview_quotes_each_section_and_no_table_or_status_line() -> None:
    sections = [
        SectionDoc("preamble", "", 0, "**Question:** q"),
        SectionDoc(
            "a",
            "Widgets",
            2,
            "Widgets — Status: Accepted; Type: Standards Track [1]. "
            "The widget format is accepted and ships in the next release of the tools [1].",
        ),
        SectionDoc("b", "Other", 2, "| X | Y [2] |\n\nShort [2]."),
    ]
    made = derived_sections(sections, {1: ("Widgets", PEP_LIKE)})
    assert [d.key for d in made] == [OVERVIEW_KEY, KEY_FACTS_KEY]
    overview = made[0].body
    assert overview.startswith("The one item tracked below is Accepted.")
    assert "ships in the next release of the tools [1]." in overview
    assert "— Status" not in overview and "|" not in overview


def test_the_overview_quotes_neither_an_older_status_nor_a_sentence_leaning_on_another() -> None:
    """ "… published draft rules" of a page now Final is true of its day, not the answer
    now; "The technology has not …" quoted alone names nothing."""
    sections = [
        SectionDoc(
            "a",
            "Widgets",
            2,
            "The widget board published draft rules for the archive format in December [1]. "
            "The technology has not yet been used by any installer in production anywhere [1]. "
            "The widget board approved the final rules for the archive format in March [1].",
        ),
    ]
    page = "Title: Widgets\nStatus: Final\n\nThe widget board approved the final rules."
    overview = derived_sections(sections, {1: ("Widgets", page)})[0].body
    assert "approved the final rules for the archive format in March [1]." in overview
    assert "draft" not in overview and "The technology" not in overview


def test_the_overview_quotes_no_sentence_pointing_at_its_pages_code_or_tables() -> None:
    """A section a writer made may quote "… described above"; the overview, which opens the
    report, would point at nothing above it."""
    sections = [
        SectionDoc(
            "a",
            "Widgets",
            2,
            "The widget concept is described above, and widgets appear in every archive [1]. "
            "The widget board approved the final rules for the archive format in March [1].",
        ),
    ]
    page = "Title: Widgets\nStatus: Final\n\nThe widget board approved the final rules."
    overview = derived_sections(sections, {1: ("Widgets", page)})[0].body
    assert "approved the final rules for the archive format in March [1]." in overview
    assert "described above" not in overview


def test_the_overview_quotes_no_thing_named_only_by_a_common_noun() -> None:
    """ "The demonstration is designed …" names its demonstration in the sentences before
    it, "… welcomed this provision" its provision; at the top of a report they name
    nothing."""
    body = (
        "The demonstration is designed to answer three questions about iron-air cells [1]. "
        "The Arden Storage Association welcomed this provision of the new regulation [1]. "
        "Greyhaven is the first multi-day storage demonstration in the interconnection [1]."
    )
    overview = derived_sections([SectionDoc("a", "Projects", 2, body)], {})[0].body
    assert overview.startswith("Greyhaven is the first"), overview
    # a noun that ends a name the section gives stands for that name
    applies = "The regulation applies to producers of industrial batteries above 2 kWh [2]. "
    price = "The average installed price of storage fell to 121 dollars per kWh [2]."
    named = "Battery Stewardship Regulation — Status: Final [2]. " + applies + price
    overview = derived_sections([SectionDoc("b", "Policy", 2, named)], {})[0].body
    assert overview.startswith("The average installed price"), overview
    alone = derived_sections([SectionDoc("b", "Policy", 2, applies + price)], {})[0].body
    # "The regulation …" stands for a regulation named before, even where none is
    assert alone.startswith("The average installed price"), alone


# -- through create and update -----------------------------------------------------------
QUESTION = "Where do the widget standards stand: archive layout, signing?"


def _page(slug: str, as_of: str, status: str, text: str) -> dict:
    return {
        "url": f"https://ex.org/{slug}",
        "title": f"Widget {slug}",
        "as_of": as_of,
        "content": f"Title: Widget {slug}\nStatus: {status}\nType: Standards Track\n\n{text}",
    }


LAYOUT = (
    "The widget archive layout puts package metadata in a top level folder of the archive. "
    "Tools read the widget archive layout before they install the package contents. "
)
SIGNING = (
    "Widget archive signing attaches a detached signature file to each widget archive. "
    "Installers verify the widget archive signature against a published signing key. "
)


def _key_fact_claims(s: Session, version_id: int | None) -> list[Claim]:
    return list(
        s.exec(
            select(Claim)
            .join(Section, Claim.section_id == Section.id)
            .where(Section.version_id == version_id, Section.key == KEY_FACTS_KEY)
        ).all()
    )


def test_a_report_opens_with_its_answer_and_key_facts_and_updates_revise_them_first(
    workspace: Path, tmp_path: Path
) -> None:
    records = [
        _page("layout", "2024-01-01", "Draft", LAYOUT),
        _page("signing", "2024-01-01", "Draft", SIGNING),
        _page("layout", "2024-06-01", "Final", LAYOUT),
    ]
    add_corpus("wk", write_jsonl(tmp_path / "wk.jsonl", records))
    made = create_report(QUESTION, as_of=parse_as_of("2024-02-01"), source="corpus:wk")
    with session_scope() as s:
        version = get_version(s, get_report(s, made["report_id"]))
        doc = load_doc(s, version)
        assert [sec.key for sec in doc.sections[:3]] == ["preamble", OVERVIEW_KEY, KEY_FACTS_KEY]
        assert [sec.heading for sec in doc.sections[3:]] == ["Archive layout", "Signing"]
        table = doc.sections[2].body
        assert "| Widget layout | Draft [" in table and "| Widget signing | Draft [" in table
        rows = _key_fact_claims(s, version.id)
        assert len(rows) == 2 and all(c.state == "supported" for c in rows)
    result = update_report(made["report_id"], as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        first_change = next(p for p in props if p.action != "keep")
        assert first_change.key in (OVERVIEW_KEY, KEY_FACTS_KEY)
        facts = next(p for p in props if p.key == KEY_FACTS_KEY)
        assert facts.action == "revise" and "| Widget layout | Final [" in (facts.new_text or "")
        commit_run(s, get_run(s, result["run_id"]), approve_all=True)
        doc = load_doc(s, get_version(s, get_report(s, made["report_id"])))
    table = next(sec.body for sec in doc.sections if sec.key == KEY_FACTS_KEY)
    assert "Final [" in table and "| Widget layout | Draft" not in table
    assert all(markers for _p, _s, markers in cited_sentences(table))
    # the overview says what changed since the version updated, the change as a claim
    overview = next(sec for sec in doc.sections if sec.key == OVERVIEW_KEY)
    assert "**Declared status changes, 2024-02-01 → 2024-07-01:**" in overview.body
    assert "- Widget layout — Status: Final [" in overview.body
    assert "On 2024-02-01 this report had: Draft." in overview.body
    assert "Widget signing — Status" not in overview.body  # unchanged: not listed
    with session_scope() as s:
        version = get_version(s, get_report(s, made["report_id"]))
        change = [
            c
            for c in s.exec(
                select(Claim)
                .join(Section, Claim.section_id == Section.id)
                .where(Section.version_id == version.id, Section.key == OVERVIEW_KEY)
            )
            if "Status: Final" in c.sentence
        ]
        assert change and all(c.state == "supported" for c in change)


def test_the_statuses_a_key_facts_table_shows_are_read_back_from_it() -> None:
    rows = [
        FactRow(3, "Widgets", "Accepted", "24-Oct-2023"),
        FactRow(5, "Gadgets", "Final", ""),
        FactRow(9, "Plant", "In construction since 14 September 2026", ""),
    ]
    for table in (key_facts_body(rows), key_facts_body(rows[1:])):
        read = table_statuses(table)
        assert read[5] == "Final" and read[9].startswith("In construction")
    assert table_statuses(key_facts_body(rows))[3].startswith("Accepted")
    assert table_statuses(key_facts_body([rows[0], rows[1], rows[1]]))  # one column or two
    assert table_statuses("Some prose [3].\n\n- a list item [4].") == {}


def test_status_changes_list_only_what_changed_with_the_value_the_report_had() -> None:
    rows = [
        FactRow(1, "Widgets", "Final", "", "status"),
        FactRow(2, "Gadgets", "Draft", ""),
        FactRow(3, "Plant", "In construction since 14 September 2026", ""),
        FactRow(4, "New thing", "Draft", ""),
    ]
    since = Since(date(2024, 2, 1), {1: "Draft", 2: "Draft", 3: "In construction"})
    text = status_changes(rows, since, date(2024, 7, 1))
    assert text.splitlines() == [
        "**Declared status changes, 2024-02-01 → 2024-07-01:**",
        "",
        "- Widgets — status: Final [1]. On 2024-02-01 this report had: Draft.",
    ]  # the page's own label; a date added to a status is no change; a new row is none
    assert status_changes(rows, None, date(2024, 7, 1)) == ""
    assert status_changes(rows[1:2], since, date(2024, 7, 1)) == ""


def test_a_key_facts_row_is_supported_by_the_declarations_even_without_the_title() -> None:
    from core.domain.anchors import anchor_claim

    page = (
        "- Developer: Larchmont\n- Capacity: 300 MW\n- Status: Approved\n\n"
        "The park sits next to the substation and will be built in two phases.\n"
    )
    held = anchor_claim("| Copperline Storage Park | Approved [8] |", page)
    assert held.supported and [s.exact for s in held.selectors] == ["- Status: Approved"]
    assert not anchor_claim("| Copperline Storage Park | Proposed [8] |", page).supported


def test_a_right_date_does_not_save_a_key_facts_row_with_the_wrong_status() -> None:
    """A row that gives the right date and the wrong status is contradicted: its date and
    title covered most of its words, and a wrong status passed."""
    from core.domain.anchors import anchor_claim

    held = anchor_claim("| Widgets | Accepted since 24-Oct-2023 [1] |", PEP_LIKE)
    assert held.supported and any("Resolution" in s.exact for s in held.selectors)
    for row in (
        "| Widgets | Final since 24-Oct-2023 [1] |",
        "| Widgets | Final [1] | 24-Oct-2023 |",
    ):
        wrong = anchor_claim(row, PEP_LIKE)
        assert not wrong.supported and wrong.contradicted[0][0] == "Final"
    swift = anchor_claim("| Structured widgets | Implemented (Swift 5.5) [2] |", SWIFT_LIKE)
    assert swift.supported and not swift.contradicted
    assert anchor_claim("| Structured widgets | Accepted [2] |", SWIFT_LIKE).contradicted


ROLLOUT = "Status: Accepted; rollout due to start in March 2024"


def test_a_value_past_its_date_is_noted_under_the_table_with_what_another_source_says(
    workspace: Path, tmp_path: Path
) -> None:
    """ "Accepted; rollout due to start in March 2024", read in May, is true to its page
    and no longer the news: the key facts say so, beside what another cited page says of
    the item — even in an update where no page changed."""
    signing = (
        SIGNING
        + "Toolmakers began the Widget layout rollout in March across the tools. "
        + "Widget archive signing is expected in April 2024 in the archive tools. "
    )
    records = [
        _page("layout", "2024-01-01", "Accepted; rollout due to start in March 2024", LAYOUT),
        _page("signing", "2024-01-01", "Draft", signing),
    ]
    add_corpus("wd", write_jsonl(tmp_path / "wd.jsonl", records))
    made = create_report(QUESTION, as_of=parse_as_of("2024-02-01"), source="corpus:wd")
    with session_scope() as s:
        doc = load_doc(s, get_version(s, get_report(s, made["report_id"])))
    table = next(sec.body for sec in doc.sections if sec.key == KEY_FACTS_KEY)
    assert "rollout due to start in March 2024 [" in table and "Past their date" not in table
    result = update_report(made["report_id"], as_of=parse_as_of("2024-05-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        assert all(p.action == "keep" for p in props if p.key not in DERIVED_KEYS)
        # a section's own sentence stating a plan now over is flagged for the analyst
        flagged = [f for p in props for f in p.flags if f.startswith("Past its date")]
        assert flagged == [
            "Past its date on 2024-05-01: “due to start in March 2024” [1]",
            "Past its date on 2024-05-01: “expected in April 2024” [2]",
        ], flagged
        facts = next(p for p in props if p.key == KEY_FACTS_KEY)
        assert facts.action == "revise" and "past its date" in facts.rationale
        note = (facts.new_text or "").split("Past their date as of 2024-05-01:", 1)[1]
        assert "Widget layout: Accepted; rollout due to start in March 2024 [" in note
        assert "Elsewhere in this report: Toolmakers began the Widget layout rollout" in note
        commit_run(s, get_run(s, result["run_id"]), approve_all=True)
        version = get_version(s, get_report(s, made["report_id"]))
        claims = _key_fact_claims(s, version.id)
    assert len(claims) == 4 and all(c.state == "supported" for c in claims)


def test_past_due_reads_a_standing_plan_and_the_period_it_names() -> None:
    from datetime import date

    from core.domain.expectations import past_due

    october = date(2026, 10, 15)
    assert [
        e.phrase for e in past_due("Funded; construction due to start in August 2026", october)
    ] == ["due to start in August 2026"]
    assert past_due("Commercial operation expected in Q4 2026", october) == []  # not over yet
    assert past_due("Commercial operation expected in Q3 2026", october)
    assert past_due("The plant will open by mid-2026.", october)
    assert past_due("3.9.0 final: expected on Monday, October 5, 2020", october)
    assert past_due("The plant was expected to open in 2025 but slipped.", october) == []
    assert past_due("The rules set in 2019 require a permit.", october) == []
    assert past_due("It was rejected due to lack of interest in 2019.", october) == []
    assert past_due("Sales fell due to the change in rules in 2024.", october) == []
    assert past_due("The first window opens on 1 February 2026.", october) == []  # a fact


def test_past_due_notes_name_each_cited_sentence_s_plan_and_its_sources() -> None:
    from datetime import date

    from core.domain.expectations import past_due_notes

    body = (
        "Kestrel Flats is in construction, with commercial operation expected in Q4 2026 "
        "[7]. Copperline will not start operating until the second quarter of 2028 [8].\n\n"
        "Greyhaven is due to start construction in August 2026 [9][3]."
    )
    assert past_due_notes(body, date(2027, 1, 5)) == [
        "Past its date on 2027-01-05: “expected in Q4 2026” [7]",
        "Past its date on 2027-01-05: “due to start construction in August 2026” [9][3]",
    ]
    assert past_due_notes(body, date(2026, 7, 1)) == []
