"""Claim anchors: finding a sentence's supporting passages and re-finding them later."""

from __future__ import annotations

from core.domain.anchors import anchor_claim
from core.domain.passage_changes import passage_differences
from core.domain.passages import passages
from core.domain.relocate import locate
from core.domain.selectors import Selector
from core.writers.base import ClaimUpdate
from core.writers.offline import OfflineWriter
from core.writers.revision import revise_sentence, supersedes

PAGE = """- Developer and owner: Ostrander Power
- Capacity: 100 MW / 400 MWh
- Status: In construction
- Expected commercial operation: Q4 2026

## Overview

Kestrel Flats is a standalone four-hour battery project being built next to the
Kestrel Flats 220 kV substation. Ostrander Power reached financial close in August 2025
and began site works in October 2025.

## Financing

The project cost is estimated at $165 million, financed with a construction loan.
"""


def test_passages_have_exact_offsets_and_prose_is_split_into_sentences() -> None:
    ps = passages(PAGE)
    assert all(PAGE[p.start : p.end] == p.text for p in ps)
    texts = [p.text for p in ps]
    assert "- Capacity: 100 MW / 400 MWh" in texts
    assert any(t.startswith("Ostrander Power reached financial close") for t in texts)
    assert next(p for p in ps if "Capacity" in p.text).field == ("Capacity", "100 MW / 400 MWh")


def test_a_verbatim_quote_is_one_passage() -> None:
    found = anchor_claim(
        "The project cost is estimated at $165 million, financed with a construction loan [3].",
        PAGE,
    )
    assert found.supported and len(found.selectors) == 1
    assert found.selectors[0].exact.startswith("The project cost is estimated")


def test_a_paraphrase_is_anchored_one_passage_per_fact() -> None:
    sentence = (
        "Ostrander Power's Kestrel Flats project, sized at 100 MW / 400 MWh, is in "
        "construction and should start operating in Q4 2026 [7]."
    )
    found = anchor_claim(sentence, PAGE)
    exact = [s.exact for s in found.selectors]
    assert found.supported and not found.missing
    assert "- Capacity: 100 MW / 400 MWh" in exact
    assert "- Status: In construction" in exact
    assert "- Expected commercial operation: Q4 2026" in exact


def test_a_figure_the_page_does_not_state_is_unsupported() -> None:
    found = anchor_claim("Kestrel Flats cost $999 million to build [7].", PAGE)
    assert not found.supported and "999" in found.missing


def test_an_empty_page_supports_nothing() -> None:
    assert not anchor_claim("Anything at all [1].", "").supported
    assert not anchor_claim("Anything at all [1].", "   \n").supported


def _sel(exact: str, content: str = PAGE) -> Selector:
    start = content.index(exact)
    return Selector.at(content, start, start + len(exact))


def test_locate_outcomes() -> None:
    capacity = _sel("- Capacity: 100 MW / 400 MWh")
    assert locate(capacity, PAGE).outcome == "intact"
    moved = PAGE.replace("- Developer and owner: Ostrander Power\n", "") + "\nNote.\n"
    assert locate(capacity, "Intro line.\n\n" + moved).outcome in ("intact", "moved")
    edited = locate(capacity, PAGE.replace("100 MW / 400 MWh", "160 MW / 650 MWh"))
    assert edited.outcome == "edited" and edited.new == "- Capacity: 160 MW / 650 MWh"
    assert edited.differences == ["Capacity: 100 MW / 400 MWh → 160 MW / 650 MWh"]
    cost = _sel("The project cost is estimated at $165 million, financed with a construction loan.")
    typo = PAGE.replace("financed with a construction", "financed wiht a construction")
    assert locate(cost, typo).outcome == "reworded"  # no figure, status or negation moved
    gone = PAGE.replace(cost.exact, "")
    assert locate(cost, gone).outcome == "gone"


def test_a_repeated_line_reanchors_to_its_own_place() -> None:
    page = "## 2025\n\nStatus: Open\n\nText one.\n\n## 2026\n\nStatus: Open\n\nText two.\n"
    second = page.rindex("Status: Open")
    sel = Selector.at(page, second, second + len("Status: Open"))
    changed = page[:second] + "Status: Closed" + page[second + len("Status: Open") :]
    found = locate(sel, changed)
    assert found.outcome == "edited" and found.selector.start == second
    assert locate(sel, page).selector.start == second


def test_figures_are_paired_by_position() -> None:
    diffs = passage_differences(
        "The index stood at $142/kWh in Q4 2025, down from $151/kWh in Q3 2025.",
        "The index stood at $134/kWh in Q1 2026, down from $142/kWh in Q4 2025.",
    )
    assert diffs == [
        "$142/kWh → $134/kWh",
        "Q4 2025 → Q1 2026",
        "$151/kWh → $142/kWh",
        "Q3 2025 → Q4 2025",
    ]


def test_a_changed_claim_past_any_cut_off_is_still_found() -> None:
    lines = [f"Filler sentence number {i} about nothing in particular." for i in range(400)]
    old = "\n\n".join(lines + ["The final capacity is 100 MW."])
    new = "\n\n".join(
        [ln.replace("nothing", "something") for ln in lines] + ["The final capacity is 160 MW."]
    )
    found = anchor_claim("The final capacity is 100 MW [1].", old)
    assert locate(found.selectors[0], new).outcome == "edited"


def _update(sentence: str, old: str, new: str | None, marker: int = 4) -> ClaimUpdate:
    return ClaimUpdate(
        sentence,
        marker,
        "edited" if new else "gone",
        ((old, new),),
        title="Tessaly Storage Price Index",
    )


def test_revision_keeps_the_sentence_subject() -> None:
    sentence = (
        "The Tessaly Storage Price Index for turnkey systems stood at $142/kWh in Q4 2025, "
        "down from $151/kWh in Q3 2025 [4]."
    )
    out = revise_sentence(
        sentence,
        [
            _update(
                sentence,
                "The index stood at $142/kWh in Q4 2025, down from $151/kWh in Q3 2025.",
                "The index stood at $134/kWh in Q1 2026, down from $142/kWh in Q4 2025.",
            )
        ],
    )
    assert out == [
        "The Tessaly Storage Price Index for turnkey systems stood at $134/kWh in Q1 2026, "
        "down from $142/kWh in Q4 2025 [4]."
    ]


def test_a_status_in_prose_is_quoted_not_swapped() -> None:
    sentence = "Copperline Storage Park, a proposed project, awaits a decision [8]."
    out = revise_sentence(
        sentence,
        [
            ClaimUpdate(
                sentence,
                8,
                "edited",
                (("- Status: Proposed", "- Status: Approved"),),
                title="Copperline Storage Park",
            )
        ],
    )
    assert out == ["Copperline Storage Park — Status: Approved [8]."]


def test_a_sentence_whose_passages_are_gone_is_dropped_or_loses_that_citation() -> None:
    only = "Ashgrove is on hold [9]."
    assert revise_sentence(only, [_update(only, "Status: On hold", None, 9)]) == []
    both = "Ashgrove is on hold [5][9]."
    assert revise_sentence(both, [_update(both, "Status: On hold", None, 9)]) == [
        "Ashgrove is on hold [5]."
    ]
    # the sources left are cited as one group, as every writer cites them
    three = "Ashgrove is on hold [4, 5, 9]."
    assert revise_sentence(three, [_update(three, "Status: On hold", None, 9)]) == [
        "Ashgrove is on hold [4, 5]."
    ]


def test_a_new_status_replaces_the_sentence_it_contradicts() -> None:
    from core.writers.base import Evidence

    old_body = (
        "Copperline Storage Park, a proposed 300 MW project, is awaiting a planning board "
        "decision [8]. Kestrel Flats is in construction [7]."
    )
    recap = Evidence(
        16,
        "https://example.invalid/recap",
        "Quarterly recap",
        "The county planning board approved the 300 MW Copperline Storage Park on 3 March, "
        "after a long hearing about fire risk and noise.",
    )
    draft = OfflineWriter().revise_section(
        "Which battery projects are approved?", "Projects", old_body, [], [recap]
    )
    assert "awaiting a planning board decision" not in draft.body
    assert "approved the 300 MW Copperline Storage Park on 3 March" in draft.body
    assert "Kestrel Flats is in construction [7]." in draft.body
    assert supersedes(
        "The board approved Copperline Storage Park [16].",
        "Copperline Storage Park is proposed [8].",
    )
    assert not supersedes(
        "Copperline Storage Park has 300 MW [16].", "Copperline Storage Park is approved [8]."
    )


def test_a_new_sentence_supersedes_only_what_names_the_same_thing() -> None:
    """Two proposals sharing the first words of their names are two things; a summary of a
    page's declared fields is revised from that page only (a Swift package report lost
    "Package Manager Target Based Dependency Resolution — Status: Accepted [19]" to a
    sentence about the Resources proposal, and with it the news that 19 was now partly
    implemented)."""
    resources = (
        "The recently accepted Package Manager Resources proposal allows users to define "
        "resources in their manifests [30]."
    )
    assert not supersedes(
        resources, "Package Manager Target Based Dependency Resolution is proposed [19]."
    )
    assert not supersedes(
        resources, "Package Manager Target Based Dependency Resolution — Status: Accepted [19]."
    )
    assert not supersedes(resources, "Package Manager Resources — Status: Proposed [28].")
    assert supersedes(resources, "Package Manager Resources is proposed for review [28].")
    # a name's first word capitalised only because it opens the sentence is no part of it
    assert supersedes(
        "On 26 March the Halvard Grid Authority Board approved final rules for storage [4].",
        "The Halvard Grid Authority (HGA) published draft rules for storage [10].",
    )


def test_a_declared_value_written_as_a_link_is_read_as_its_text() -> None:
    # the page's own line, copied verbatim, is no contradiction of the page
    page = "PEP: 345\nPost-History: `22-Dec-2009 <https://mail.python.org/x/>`__\nStatus: Final\n"
    same = anchor_claim("Post-History: `22-Dec-2009 <https://mail.python.org/x/>`__", page)
    assert same.supported and not same.contradicted
    other = anchor_claim("Post-History: 23-Dec-2009", page)
    assert not other.supported and other.contradicted


def test_a_passage_rewrapped_into_a_longer_one_still_holds() -> None:
    old = "Intro.\n\nOur policy is that every version gets its own\n      directory.\n\nEnd.\n"
    new = (
        "Intro.\n\n- Now you need to move all the files over there.  Our policy is that\n"
        "  every version gets its own directory.\n\nEnd.\n"
    )
    [sel] = anchor_claim("Our policy is that every version gets its own directory.", old).selectors
    found = locate(sel, new)
    assert found.outcome == "moved" and found.selector is not None
    assert found.selector.exact in new and found.selector.exact.startswith("Our policy")


def test_a_declared_value_inside_a_longer_value_is_an_edit() -> None:
    old = "Title: Plan\nStatus: Accepted\n\nThe plan text goes here.\n"
    new = "Title: Plan\nStatus: Accepted with modifications\n\nThe plan text goes here.\n"
    [sel] = [s for s in anchor_claim("Status: Accepted", old).selectors if "Status" in s.exact]
    assert locate(sel, new).outcome == "edited"


def test_a_sentence_reindented_inside_a_long_list_item_elsewhere_still_holds() -> None:
    old = (
        "Steps.\n\n      In general, please don't touch the toplevel\n          directory unless"
        " you know what you're doing.\n\nMore.\n"
    )
    new = (
        "Steps.\n\nMore.\n\n  - The docs script also needs to be updated with the new branch"
        " names and\n    then run once by hand.  In general, please don't touch the toplevel\n"
        "    directory unless you know what you're doing.\n"
    )
    sentence = "In general, please don't touch the toplevel directory unless you know what."
    [sel] = anchor_claim(sentence, old).selectors
    found = locate(sel, new)
    assert found.outcome == "moved" and found.selector is not None
    assert found.selector.exact in new


def test_a_list_item_wrapped_at_column_zero_is_one_passage() -> None:
    page = (
        "- The first reviewed revision used `take`. Along with `borrow`, `take` arose during"
        " [the first review of\nSE-0366](https://forums.example.org/t/se-0366).\n\n"
        "Currently under review as SE-0366, an operator ends a variable's lifetime.\n"
    )
    claim = "Along with `borrow`, `take` arose during the first review of SE-0366."
    found = anchor_claim(claim, page)
    assert found.supported and len(found.selectors) == 1
    assert "Currently" not in found.selectors[0].exact


def test_a_body_with_an_escaped_angle_bracket_anchors_on_the_page() -> None:
    page = "PEP: 1\nDiscussions-To: <email address or URL>\n"
    assert anchor_claim("Discussions-To: &lt;email address or URL>", page).supported


def test_header_fields_with_empty_values_stay_separate_passages() -> None:
    page = "PEP: 639\nCreated: 15-Aug-2019\nPost-History:\nResolution:\n\nBody text here.\n"
    texts = [p.text for p in passages(page)]
    assert "Created: 15-Aug-2019" in texts and "Post-History:" in texts


def test_what_would_happen_becoming_what_is_is_an_edit() -> None:
    page = "The standard is final.\n\nASI 7400 would apply to installations of 20 MWh or more.\n"
    claim = _sel("ASI 7400 would apply to installations of 20 MWh or more.", page)
    in_force = locate(claim, page.replace("would apply", "applies"))
    assert in_force.outcome == "edited"  # planned → in force: the sentence must be revised
    assert "would" in " ".join(in_force.differences)
    reworded = locate(claim, page.replace("installations of", "installations with"))
    assert reworded.outcome == "reworded"
