"""What a revision prompt carries (``core.writers.prompt_material``): each passage once.

A changed source's passages reach the model through the ``<claim>`` blocks and the
change lines, so its ``<source>`` block holds its title, address and declared facts, not
its page text; a change line a claim block or the reasons already quote is not repeated.
A revision re-sends every changed source of a section, so each repeat costs every year.
"""

from __future__ import annotations

from core.domain.claim_diff import ClaimChange
from core.writers.base import ClaimUpdate, Evidence, EvidenceChange
from core.writers.prompt_material import claim_passages, describe_change, revision_bundle

SCHEDULE = (
    "PEP: 619\nTitle: Widget 3.10 Release Schedule\nStatus: Active\n\n"
    "Abstract\n========\n\nThis document describes the widget 3.10 timetable in detail. "
    + "Widget 3.10.0 alpha 1: Monday, 2020-10-05. " * 40
    + "\n\nBugfix releases\n\n- 3.10.17: Tuesday, 2025-04-08\n"
)
NOTE = (
    "The widget guild keeps its archive format stable across releases. " * 30
    + "Support ends in October 2026."
)


def page(marker: int, title: str, content: str) -> Evidence:
    return Evidence(marker, f"https://widgets.example/{marker}", title, content)


def test_a_changed_source_that_declares_facts_is_not_sent_whole() -> None:
    change = EvidenceChange(
        41,
        "material",
        claims=(ClaimChange(None, "- 3.10.17: Tuesday, 2025-04-08"),),
        reasons=("adds “3.10.17: Tuesday, 2025-04-08”",),
        new=page(41, "Widget 3.10 Release Schedule", SCHEDULE),
    )
    bundle = revision_bundle([change], [], "Archive format")
    assert "declares: Status: Active" in bundle
    assert "alpha 1" not in bundle and len(bundle) < 400


def test_a_changed_source_without_declared_facts_keeps_its_head() -> None:
    change = EvidenceChange(
        5,
        "material",
        claims=(ClaimChange("Support ends in 2025.", "Support ends in October 2026."),),
        new=page(5, "Widget guild archive notes", NOTE),
    )
    bundle = revision_bundle([change], [], "Archive format")
    assert "keeps its archive format stable" in bundle and "declares:" not in bundle


def test_a_new_source_is_shown_its_text() -> None:
    bundle = revision_bundle([], [page(9, "Widget guild archive notes", NOTE)], "Archive format")
    assert bundle.count("keeps its archive format stable") > 3


def test_a_rewritten_source_is_sent_once() -> None:
    """A page whose cited passage is gone is offered to the revision as new evidence as
    well as a changed source: one ``<source>`` block, not its page text again."""
    rewritten = page(41, "Widget 3.10 Release Schedule", SCHEDULE)
    change = EvidenceChange(
        41,
        "changed",
        claims=(ClaimChange("Bugfix releases every two months.", None),),
        new=rewritten,
    )
    bundle = revision_bundle(
        [change], [rewritten, page(9, "Widget guild notes", NOTE)], "Release dates"
    )
    assert bundle.count('<source id="41">') == 1 and "alpha 1" not in bundle
    assert '<source id="9">' in bundle


def test_change_lines_leave_out_what_claims_and_reasons_quote() -> None:
    claimed = ClaimChange("Support ends in 2025.", "Support ends in October 2026.")
    other = ClaimChange("The guild meets yearly.", "The guild meets twice a year.")
    added = ClaimChange(None, "- 3.10.17: Tuesday, 2025-04-08")
    unquoted = ClaimChange(None, "- 3.10.18: Tuesday, 2025-06-03")
    change = EvidenceChange(
        5,
        "material",
        claims=(claimed, other, added, unquoted),
        reasons=("adds “3.10.17: Tuesday, 2025-04-08”",),
        new=page(5, "Widget guild archive notes", NOTE),
    )
    update = ClaimUpdate(
        "Support ends in 2025 [5].",
        5,
        "edited",
        passages=(("Support ends in 2025.", "Support ends in October 2026."),),
    )
    lines = describe_change(change, claim_passages([update], 5))
    assert "October 2026" not in lines  # the claim block quotes it
    assert "twice a year" in lines and "3.10.18" in lines
    assert lines.count("3.10.17") == 1  # in the reasons only
    # another source's claim blocks do not hide this source's lines
    assert "October 2026" in describe_change(change, claim_passages([update], 6))


def test_change_lines_leave_out_pairs_that_say_the_same() -> None:
    change = EvidenceChange(
        5,
        "material",
        claims=(
            ClaimChange(
                "Due to PEP 563, no warning is raised.", "Due to :pep:`563`, no warning is raised."
            ),
            ClaimChange("3.10 will receive bugfix updates.", "3.10 received bugfix updates."),
        ),
        new=page(5, "Widget guild archive notes", NOTE),
    )
    lines = describe_change(change)
    assert "563" not in lines  # markup only
    assert '"3.10 received bugfix updates."' in lines  # a tense is news


def test_change_lines_leave_out_a_field_change_or_a_drop_the_reasons_name() -> None:
    """ "header Status: Draft → Deferred" says what the pair "Status: Draft" → "Status:
    Deferred" would; "drops “…”" what the removed line would. A pair the reasons do not
    name, or only half of, stays."""
    change = EvidenceChange(
        21,
        "changed",
        claims=(
            ClaimChange("Status: Draft", "Status: Deferred"),
            ClaimChange("Python-Version: 3.11", "Python-Version: 3.12"),
            ClaimChange("Only 14 projects are affected.", None),
            ClaimChange("Author: Ann", "Author: Ann, Bob"),
        ),
        reasons=(
            "header Status: Draft → Deferred",
            "header Python-Version: 3.10 → 3.12",
            "drops “Only 14 projects are affected.”",
        ),
        new=page(21, "Widget macros", "Status: Deferred\n\nWidget macros are deferred."),
    )
    lines = describe_change(change)
    assert 'was: "Status: Draft"' not in lines and "removed:" not in lines
    assert 'was: "Python-Version: 3.11"' in lines  # the reason names another old value
    assert 'now: "Author: Ann, Bob"' in lines


def test_a_passage_the_page_repeats_is_one_line() -> None:
    """A schedule table adds "Security fixes only" in two rows: the writer reads it once,
    and the repeat does not take the place of another passage."""
    repeated = ClaimChange(None, "Security fixes only")
    others = [ClaimChange(None, f"3.3.{n} final: September {n}, 2017") for n in range(1, 13)]
    change = EvidenceChange(
        5, "material", (repeated, repeated, *others), (), page(5, "Widget 3.3", SCHEDULE)
    )
    text = describe_change(change)
    assert text.count("Security fixes only") == 1
    assert text.count("  - added:") == 12 and "3.3.11 final" in text


def test_a_new_source_is_shown_its_words_not_its_header_or_addresses() -> None:
    """A Swift proposal's opening was its header block (authors, review manager, links
    to pull requests); what it says began after. Its status is on the "declares:" line."""
    proposal = (
        "# Package command plugins\n\n"
        "* Proposal: [SE-0332](0332-swiftpm-command-plugins.md)\n"
        "* Author: [Anders Bertelrud](https://github.com/abertelrud)\n"
        "* Status: **Accepted**\n"
        "* Implementation: [swift-package-manager#3855](https://github.com/org/repo/pull/3855)\n\n"
        "## Introduction\n\n"
        "Command plugins extend the [package manager](https://www.swift.org/package-manager/) "
        "with custom actions that a developer invokes by name.\n"
    )
    bundle = revision_bundle([], [page(7, "Package command plugins", proposal)], "Plugins")
    assert "declares: Status: Accepted" in bundle
    assert "Command plugins extend the package manager with custom actions" in bundle
    assert "Bertelrud" not in bundle and "https://" not in bundle.split("---", 1)[1]


def test_a_rewrite_keeps_the_fields_the_sentence_stated_that_did_not_change() -> None:
    """A sentence gave a project's size and status; the status changed, the size did not:
    the line that replaces it states both, and a long "Label: text" list item is prose."""
    from core.writers.revision import _quoted

    update = ClaimUpdate(
        sentence="Copperline, a proposed 300 MW / 1,200 MWh project, awaits a decision [8].",
        marker=8,
        outcome="edited",
        passages=(("- Status: Awaiting planning decision", "- Status: Approved"),),
        title="Copperline Storage Park",
        intact=(
            "- Capacity: 300 MW / 1,200 MWh",
            "- Status: Awaiting planning decision",
            "- Higher deposits: developers would pay a study deposit of $5,000 per MW, up "
            "from a flat $75,000 per request, with part of it forfeited on withdrawal",
        ),
    )
    assert _quoted(update) == [
        "Copperline Storage Park — Capacity: 300 MW / 1,200 MWh; Status: Approved [8]."
    ]
