"""A writer's draft is checked against the pages it cites before it is proposed."""

from __future__ import annotations

from core.domain.sentences import cited_sentences
from core.engine.draft_check import check_draft

PEP_544 = """PEP: 544
Title: Protocols: Structural subtyping (static duck typing)
Author: Ivan Levkivskyi
Status: Accepted
Type: Standards Track
Python-Version: 3.8

Abstract
========

Type hints introduced in PEP 484 can be used to specify type metadata for static type
checkers and other third party tools.
"""

PEP_483 = """PEP: 483
Title: The Theory of Type Hints
Status: Final

This PEP lays out the theory referenced by PEP 484.
"""


def test_a_status_the_page_declares_otherwise_is_corrected_to_the_declared_value() -> None:
    # a model that copied one source's change ("Draft → Final" of [8]) onto another's line
    old = "Protocols — Status: Draft [17]. The Theory of Type Hints — Status: Draft [8]."
    draft = "Protocols — Status: Final [17]. The Theory of Type Hints — Status: Final [8]."
    out = check_draft(draft, old, {17: PEP_544, 8: PEP_483})
    assert "Protocols — Status: Accepted [17]." in out.body
    assert "The Theory of Type Hints — Status: Final [8]." in out.body
    assert "Status: Final [17]" not in out.body
    assert out.corrected == ["'Status: Final' → 'Status: Accepted' [17]"]
    assert out.unsupported == []


def test_a_sentence_no_passage_supports_is_reported_not_rewritten() -> None:
    draft = "Protocols were first proposed in 1998 by a committee of 40 people [17]."
    out = check_draft(draft, "", {17: PEP_544})
    assert out.body == draft
    assert out.unsupported == [(draft, 17)]


def test_sentences_the_old_body_held_are_not_rechecked() -> None:
    kept = "Protocols were first proposed in 1998 by a committee of 40 people [17]."
    out = check_draft(kept + " Status: Accepted [17].", kept, {17: PEP_544})
    assert out.unsupported == [] and out.corrected == []


def test_a_sentence_citing_two_pages_that_disagree_is_reported_not_corrected() -> None:
    draft = "Status: Final [17][8]."
    out = check_draft(draft, "", {17: PEP_544, 8: PEP_483})
    assert out.body == draft
    assert (draft, 17) in out.unsupported


def test_a_page_the_check_does_not_know_is_left_alone() -> None:
    draft = "Something a search hit said [3]."
    assert check_draft(draft, "", {17: PEP_544}).unsupported == []


def test_a_sentence_ends_after_its_citation_before_a_figure_or_a_dash() -> None:
    body = (
        "This document describes the release schedule [13]. - 3.3 Release Managers: Georg "
        "Brandl [7]. 3.6 will receive bugfix updates every 3 months [41]. Python 3. 4 stays."
    )
    assert [(s, m) for _p, s, m in cited_sentences(body)] == [
        ("This document describes the release schedule [13].", [13]),
        ("- 3.3 Release Managers: Georg Brandl [7].", [7]),
        ("3.6 will receive bugfix updates every 3 months [41].", [41]),
    ]


def test_a_correction_that_would_rewrite_the_sentence_is_left_to_the_reviewer() -> None:
    draft = "Status: Draft, and the committee still debates every part of it [17]."
    out = check_draft(draft, "", {17: PEP_544})
    assert out.body == draft and out.corrected == []
    assert out.unsupported == [(draft, 17)]


def test_a_citation_ends_a_sentence_even_inside_an_unclosed_parenthesis() -> None:
    body = (
        "Notes: [acceptance](https://ex.org/accepted-atomic [44]. The notion of an atomic "
        "type is captured by a protocol [44]. A (parenthesis. Still open) closes here [2]."
    )
    assert [s for _p, s, _m in cited_sentences(body)] == [
        "Notes: [acceptance](https://ex.org/accepted-atomic [44].",
        "The notion of an atomic type is captured by a protocol [44].",
        "A (parenthesis. Still open) closes here [2].",
    ]
