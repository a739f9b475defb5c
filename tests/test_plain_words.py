"""What the analyst reads is plain words: evidence reasons pair each changed figure with
its replacement by position, one sentence per changed claim, no Markdown or table syntax
in claim text, the changed report sentences marked in the Before column, and a version's
citations numbered 1, 2, 3 … in reading order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.app.actions import review
from core.app.evidence_views import evidence_rows_html
from core.app.export import version_markdown
from core.app.review_views import review_cards
from core.app.version_views import version_html
from core.dates import parse_as_of
from core.domain.changes import classify_change
from core.domain.citations import cited_markers
from core.domain.claim_words import claim_sentence, plain_reason, plain_unit
from core.domain.diffing import side_by_side_html
from core.domain.material import material_reasons
from core.domain.passage_changes import passage_differences
from core.domain.report_state import RefEntry, ReportDoc, SectionDoc, renumbered
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.repository import get_report
from core.workspace import load_sample

OLD_INDEX = (
    "# Price index\n\nThe index stood at $142/kWh in Q4 2025, down from $151/kWh in Q3 2025 "
    "and 18% lower than a year earlier. The fall was driven by cheaper cells: the average "
    "cell price was $54/kWh, compared with $58/kWh in the previous quarter.\n"
)
NEW_INDEX = (
    "# Price index\n\nThe index stood at $134/kWh in Q1 2026, down from $142/kWh in Q4 2025 "
    "and 19% lower than a year earlier. The fall was driven by cheaper cells: the average "
    "cell price was $51/kWh, compared with $54/kWh in the previous quarter.\n"
)


# -- evidence reasons ----------------------------------------------------------------------
def test_reasons_pair_each_figure_with_its_replacement_by_position() -> None:
    reasons = material_reasons(OLD_INDEX, NEW_INDEX)
    assert reasons[:5] == [
        "$142/kWh → $134/kWh",
        "Q4 2025 → Q1 2026",
        "$151/kWh → $142/kWh",
        "Q3 2025 → Q4 2025",
        "18% → 19%",
    ]
    assert "$54/kWh → $51/kWh" in reasons and "$58/kWh → $54/kWh" in reasons
    joined = " ".join(reasons)
    assert "$58/kWh → $51" not in joined and "$58 → $51" not in joined  # not as sets
    assert not any(re.match(r"(number|date|version|decision word)\b", r) for r in reasons)


def test_the_classification_is_unchanged_by_the_wording() -> None:
    assert classify_change(OLD_INDEX, NEW_INDEX).kind == "material"
    restyled = OLD_INDEX.replace("$54/kWh", "$54 / kWh")
    assert classify_change(OLD_INDEX, restyled).kind == "minor"


def test_an_added_table_row_is_quoted_without_its_pipes() -> None:
    old = "# Index\n\n| Quarter | Price |\n|---|---|\n| Q4 2025 | 142 |\n"
    reasons = material_reasons(old, old + "| Q1 2026 | 134 |\n")
    assert reasons == ["adds “Q1 2026 · 134”"]


def test_passage_differences_keep_the_passage_spelling_and_join_adjacent_changes() -> None:
    diffs = passage_differences(
        "AERC proposed Order 41 in October 2025 and intends to vote by mid-2026.",
        "AERC approved Order 41 on 18 June 2026 and intends to vote on 1 July 2026.",
    )
    assert diffs == [
        "proposed → approved",
        "in October 2025 → on 18 June 2026",
        "by mid-2026 → on 1 July 2026",
    ]
    dropped = passage_differences(
        "If adopted, they would apply from the 2027/28 capacity auction.",
        "They apply from the 2027/28 capacity auction.",
    )
    assert dropped == ["“If adopted” dropped", "“would” dropped"]  # proposed → in force


def test_stored_reasons_of_the_older_form_read_without_category_words() -> None:
    assert plain_reason("header Status: Draft → Final") == "Status: Draft → Final"
    assert plain_reason("number $58 → $51") == "$58 → $51"
    assert plain_reason("date 3 march 2026 added") == "now adds 3 march 2026"
    assert plain_reason("decision word: 'draft' → (none)") == "“draft” dropped"


# -- claim text ------------------------------------------------------------------------------
def test_one_plain_sentence_per_changed_claim() -> None:
    check = {
        "marker": 7,
        "outcome": "edited",
        "passages": [
            {
                "old": "- Capacity: 100 MW / 400 MWh",
                "new": "- Capacity: 160 MW / 650 MWh",
                "differences": ["Capacity: 100 MW / 400 MWh → 160 MW / 650 MWh"],
            }
        ],
    }
    text = claim_sentence(check, "Kestrel Flats Storage Project", dates="15 Jan → 15 Apr")
    assert text == (
        "Kestrel Flats Storage Project capacity: 100 MW / 400 MWh → 160 MW / 650 MWh "
        "(source [7], 15 Jan → 15 Apr)"
    )
    gone = {"marker": 9, "outcome": "gone", "passages": [{"old": "x", "new": None}]}
    assert claim_sentence(gone, "Ashgrove: a project", page_gone=True) == (
        "Ashgrove: a project: the page was removed (source [9])"
    )


@pytest.mark.parametrize(
    ("unit", "plain"),
    [
        ("| Q1 2026 | 134 |", "Q1 2026 · 134"),
        ("## Proposed accreditation values", "Proposed accreditation values"),
        ("- Status: **Approved**", "Status: Approved"),
        ("See the [price index](https://example.org/index).", "See the price index."),
        ("Full text at https://example.org/chapter-12/full", "Full text at (link)"),
    ],
)
def test_claim_units_lose_markdown_and_table_syntax(unit: str, plain: str) -> None:
    assert plain_unit(unit) == plain


def test_evidence_rows_show_labels_and_plain_claims() -> None:
    html = evidence_rows_html(
        [
            {
                "marker": 4,
                "url": "https://example.org/index",
                "title": "Price index",
                "kind": "material",
                "similarity": 0.98,
                "reasons": ["number $151, 18% → $134, 19%"],
                "claims": [{"kind": "added", "before": None, "after": "| Q1 2026 | 134 |"}],
                "old_date": "2026-01-15",
                "new_date": "2026-04-15",
            },
            {
                "marker": 9,
                "url": "https://example.org/gone",
                "title": "Gone page",
                "kind": "gone",
                "old_date": "2026-01-15",
                "new_date": "2026-01-15",
                "error": "The page was removed before 15 July 2026.",
            },
        ]
    )
    assert "Material change" in html and ">material<" not in html
    assert "| Q1 2026 |" not in html and "Q1 2026 · 134" in html
    assert "number " not in html
    assert "error:" not in html and "2026-01-15, then removed" in html


# -- the Before column -------------------------------------------------------------------------
def test_changed_sentences_are_marked_in_the_before_column_only() -> None:
    old = "Prices fell. Kestrel Flats is sized at 100 MW [7]. Safety rules apply."
    new = "Prices fell. Kestrel Flats is sized at 160 MW [7]. Safety rules apply."
    html = side_by_side_html(old, new, ["Kestrel Flats is sized at 100 MW [7]."])
    before, after = html.split('<td class="eg-new">')
    assert before.count('<mark class="eg-hl">') >= 1 and "eg-hl" not in after
    marked = "".join(re.findall(r'<mark class="eg-hl">(.*?)</mark>', before))
    assert marked.startswith("Kestrel Flats is sized at") and "Prices" not in marked
    assert "Safety" not in marked
    assert side_by_side_html(old, new) == side_by_side_html(old, new, [])
    assert "<mark" not in side_by_side_html(old, new)


# -- reference numbers ------------------------------------------------------------------------
def test_citations_are_renumbered_in_reading_order_with_the_references() -> None:
    doc = ReportDoc(
        "T",
        [
            SectionDoc("a", "A", 1, "First [20]. Then [4] and [19, 4]."),
            SectionDoc("b", "B", 1, "Code `[4]` stays. Again [20]."),
        ],
        [RefEntry(m, f"https://example.org/{m}", f"Source {m}") for m in (4, 19, 20, 33)],
    )
    new, numbers = renumbered(doc)
    assert numbers == {20: 1, 4: 2, 19: 3, 33: 4}
    assert new.sections[0].body == "First [1]. Then [2] and [2, 3]."
    assert new.sections[1].body == "Code `[4]` stays. Again [1]."
    assert [(r.marker, r.title) for r in new.references] == [
        (1, "Source 20"),
        (2, "Source 4"),
        (3, "Source 19"),
        (4, "Source 33"),
    ]


# -- on the sample ----------------------------------------------------------------------------
@pytest.fixture
def sample(workspace: Path) -> int:
    with session_scope() as s:
        return int(load_sample(s)["report_id"])


def test_sample_review_reads_in_plain_words(sample: int) -> None:
    result = update_report(sample, as_of=parse_as_of("2026-04-15"))
    with session_scope() as s:
        cards = review_cards(s, int(result["run_id"]))
    texts = [c["text"] for card in cards for c in card["claim_changes"]]
    assert (
        "Kestrel Flats Storage Project capacity: 100 MW / 400 MWh → 160 MW / 650 MWh "
        "(source [7], 15 Jan → 15 Apr)"
    ) in texts
    deployments = next(c for c in cards if c["key"] == "deployments-and-project-pipeline")
    assert '<mark class="eg-hl">' in deployments["diff_html"]
    assert "sized at 100 MW / 400 MWh" in deployments["highlighted"][0]
    for card in cards:
        assert "writer call" not in card["rationale"] and "://" not in card["rationale"]
        assert "source(s)" not in card["rationale"]
        for e in card["evidence"]:
            for reason in e["reasons"]:
                assert not re.match(r"(number|date|version|decision word) ", reason), reason


def test_sample_versions_number_citations_without_gaps(sample: int) -> None:
    for when in ("2026-04-15", "2026-07-15"):
        result = update_report(sample, as_of=parse_as_of(when))
        review(int(result["run_id"]), approve_all=True, commit=True)
    with session_scope() as s:
        report = get_report(s, sample)
        markdown = version_markdown(s, report)
        html = version_html(s, report)
    body, refs = markdown.split("## References")
    cited = cited_markers(body)
    assert cited == list(range(1, len(cited) + 1))  # first citations in order, no gaps
    listed = [int(n) for n in re.findall(r"^\[(\d+)\]", refs, re.M)]
    assert listed == list(range(1, len(listed) + 1)) and set(cited) <= set(listed)
    ids = [int(n) for n in re.findall(r'<li id="ref-(\d+)"', html)]
    assert ids == listed


def test_a_rationale_says_each_change_once_and_ends_one_sentence_once() -> None:
    from core.engine.rationales import explain as _explain
    from core.writers.base import ClaimUpdate

    update = ClaimUpdate(
        sentence="Copperline Storage Park is a proposed project [8].",
        marker=8,
        outcome="edited",
        differences=(
            "Status: Proposed → Approved",
            "a proposed → an approved",  # the same change, an article apart
            "now reads “The planning board approved the application on 3 March 2026.”",
        ),
        title="Copperline Storage Park",
    )
    assert _explain([update]) == (
        "Copperline Storage Park [8]: Status: Proposed → Approved; now reads “The planning "
        "board approved the application on 3 March 2026.”"
    )
    figures = ClaimUpdate("s", 2, "edited", differences=("15 MW → 16 MW", "5 MW → 6 MW"), title="P")
    assert _explain([figures]) == "P [2]: 15 MW → 16 MW; 5 MW → 6 MW."  # two figures, both said
