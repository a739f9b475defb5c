"""Tests for core.domain.metrics: continuity metrics between report versions."""

from __future__ import annotations

import dataclasses

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from core.domain.metrics import (
    Continuity,
    bleu4,
    continuity,
    normalize_heading,
    outline_em_f1,
    outline_levels,
    outline_rouge_l,
    rouge_l_f1,
    tokenize,
)

REPORT = """# Solid-state batteries

## 1. Overview

Solid-state batteries replace the **liquid electrolyte** with a _solid_ one [1].
Energy density could rise by up to 50% [2, 3], see [the review](https://example.org/r).

## 2. Outlook

Commercial cells are expected after 2027 [4].
"""

OUTLINE = [
    (1, "Solid-state batteries"),
    (2, "1. Overview"),
    (3, "1.1 Chemistry"),
    (2, "2. Outlook"),
]


# --- tokenize -----------------------------------------------------------------------


def test_tokenize_drops_citation_markers() -> None:
    assert tokenize("Cells improved [3]. Costs fell [1, 2] and [4-6] or [7–9].") == [
        "cells",
        "improved",
        "costs",
        "fell",
        "and",
        "or",
    ]


def test_tokenize_drops_markdown_syntax() -> None:
    text = "## Key *findings* and __bold__ `code` > quote\n- item | cell |\n---"
    assert tokenize(text) == ["key", "findings", "and", "bold", "code", "quote", "item", "cell"]


def test_tokenize_links_keep_text_drop_url() -> None:
    text = "See [the IEA report](https://iea.org/a_(b)?x=1) and ![a chart](img/c.png) now."
    assert tokenize(text) == ["see", "the", "iea", "report", "and", "a", "chart", "now"]


def test_tokenize_drops_bare_urls_footnotes_and_html() -> None:
    text = "Read https://example.com/page?q=1 here[^2]<br/> <!-- note --> done"
    assert tokenize(text) == ["read", "here", "done"]


def test_tokenize_is_unicode_aware_and_lowercase() -> None:
    assert tokenize("Énergie SOLAIRE, Größe 2025") == ["énergie", "solaire", "grösse", "2025"]


def test_tokenize_empty() -> None:
    assert tokenize("") == []
    assert tokenize("# ** [1] --- `` ") == []


# --- identical / disjoint -----------------------------------------------------------


def test_identical_texts_score_one_everywhere() -> None:
    result = continuity(REPORT, REPORT, OUTLINE, OUTLINE)
    assert result == Continuity(1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("text", ["word", "two words", "three short words"])
def test_identical_short_texts_bleu_one(text: str) -> None:
    assert bleu4(text, text) == 1.0
    assert rouge_l_f1(text, text) == 1.0


def test_disjoint_texts_score_zero() -> None:
    ref = "alpha beta gamma delta epsilon zeta"
    cand = "one two three four five six seven"
    assert rouge_l_f1(ref, cand) == 0.0
    assert bleu4(ref, cand) == pytest.approx(0.0, abs=1e-9)


def test_citation_only_changes_do_not_matter() -> None:
    ref = "Prices fell sharply in 2024 [1]."
    cand = "Prices **fell** sharply in 2024 [7, 8]."
    assert rouge_l_f1(ref, cand) == 1.0
    assert bleu4(ref, cand) == 1.0


@pytest.mark.parametrize("metric", [rouge_l_f1, bleu4])
def test_empty_edge_cases(metric) -> None:
    assert metric("", "") == 1.0
    assert metric("[1] ##", "") == 1.0  # both tokenize to nothing
    assert metric("some text", "") == 0.0
    assert metric("", "some text") == 0.0


def test_rouge_l_known_value() -> None:
    # LCS("a b c d", "a c e") = 2 -> P = 2/3, R = 2/4 -> F1 = 4/7
    assert rouge_l_f1("a b c d", "a c e") == pytest.approx(4 / 7)


def test_rouge_l_long_text_runs() -> None:
    words = [f"w{i % 997}" for i in range(12_000)]
    ref = " ".join(words)
    cand = " ".join(words[:6000] + ["inserted"] * 10 + words[6000:])
    assert rouge_l_f1(ref, ref) == 1.0
    expected = 2 * (12_000 / 12_010) * 1.0 / (12_000 / 12_010 + 1.0)
    assert rouge_l_f1(ref, cand) == pytest.approx(expected)


# --- agreement with reference implementations ---------------------------------------

PLAIN_PAIRS = [
    ("the cat sat on the mat", "the cat sat on the mat"),
    ("the cat sat on the mat", "a cat was sitting on a mat"),
    ("the the the the", "the"),
    ("a b a b a b", "b a b a"),
    ("solar power grew quickly last year", "wind power grew slowly"),
    ("one", "one two three four five six seven eight nine ten"),
    ("x y z", "z y x"),
    (
        "batteries store energy and batteries release energy when needed",
        "energy is stored by batteries and released by batteries when needed most",
    ),
    ("alpha beta", "gamma delta"),
]


@pytest.mark.parametrize(("ref", "cand"), PLAIN_PAIRS)
def test_rouge_l_matches_rouge_score(ref: str, cand: str) -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    expected = scorer.score(ref, cand)["rougeL"].fmeasure
    assert rouge_l_f1(ref, cand) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("ref", "cand"), PLAIN_PAIRS)
def test_bleu4_matches_sacrebleu(ref: str, cand: str) -> None:
    expected = sacrebleu.sentence_bleu(cand, [ref], tokenize="none").score / 100
    assert bleu4(ref, cand) == pytest.approx(min(expected, 1.0), abs=1e-9)


def test_bleu4_is_between_zero_and_one_for_partial_overlap() -> None:
    ref = "the quick brown fox jumps over the lazy dog near the river bank"
    cand = "the quick brown fox leaps over the lazy cat near the river bank"
    assert 0.0 < bleu4(ref, cand) < 1.0


# --- outlines -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1. Intro", "intro"),
        ("2.1 Methods & Data", "methods data"),
        ("(3) Results", "results"),
        ("IV. Discussion", "discussion"),
        ("  **Key   Findings:**  ", "key findings"),
        ("2024 Outlook", "2024 outlook"),
        ("Solid-state batteries", "solid state batteries"),
    ],
)
def test_normalize_heading(raw: str, expected: str) -> None:
    assert normalize_heading(raw) == expected


def test_outline_levels_keeps_top_three_levels_present() -> None:
    headings = [(1, "T"), (2, "A"), (3, "A1"), (4, "A1a"), (2, "B")]
    assert outline_levels(headings) == [(1, "T"), (2, "A"), (3, "A1"), (2, "B")]
    # no H1: levels 2..4 are the top three present
    shifted = [(2, "A"), (3, "A1"), (4, "A1a"), (5, "deep")]
    assert outline_levels(shifted) == [(2, "A"), (3, "A1"), (4, "A1a")]
    assert outline_levels(headings, depth=1) == [(1, "T")]
    assert outline_levels([]) == []
    with pytest.raises(ValueError):
        outline_levels(headings, depth=0)


def test_outline_one_renamed_of_four() -> None:
    ref = [(1, "Title"), (2, "Intro"), (2, "Methods"), (2, "Results")]
    cand = [(1, "Title"), (2, "Intro"), (2, "Approach"), (2, "Results")]
    # 3 of 4 match -> P = R = 0.75
    assert outline_em_f1(ref, cand) == pytest.approx(0.75)
    # LCS of heading sequences = 3 of 4 -> 0.75
    assert outline_rouge_l(ref, cand) == pytest.approx(0.75)


def test_outline_added_section() -> None:
    ref = [(1, "Title"), (2, "Intro"), (2, "Results")]
    cand = [(1, "Title"), (2, "Intro"), (2, "New findings"), (2, "Results")]
    # matches = 3, P = 3/4, R = 1 -> F1 = 6/7
    assert outline_em_f1(ref, cand) == pytest.approx(6 / 7)
    assert outline_rouge_l(ref, cand) == pytest.approx(6 / 7)


def test_outline_ignores_level_four_when_top_three_exist() -> None:
    ref = [(1, "Title"), (2, "Intro"), (3, "Scope"), (4, "Footnote detail")]
    cand = [(1, "Title"), (2, "Intro"), (3, "Scope"), (4, "Something else entirely")]
    assert outline_em_f1(ref, cand) == 1.0
    assert outline_rouge_l(ref, cand) == 1.0
    # with depth=4 the level-4 headings count
    assert outline_em_f1(ref, cand, depth=4) == pytest.approx(0.75)


def test_outline_numbering_and_case_are_ignored() -> None:
    ref = [(1, "Report"), (2, "1. Intro"), (2, "2. Market Size")]
    cand = [(1, "report"), (2, "Intro"), (2, "Market size:")]
    assert outline_em_f1(ref, cand) == 1.0
    assert outline_rouge_l(ref, cand) == 1.0


def test_outline_em_uses_relative_levels_and_multisets() -> None:
    # same shape one level deeper: relative levels agree
    ref = [(1, "T"), (2, "A"), (2, "A")]
    cand = [(2, "T"), (3, "A"), (3, "A")]
    assert outline_em_f1(ref, cand) == 1.0
    # a heading moved to another level no longer matches; duplicates count once each
    cand2 = [(1, "T"), (2, "A"), (3, "A")]
    assert outline_em_f1(ref, cand2) == pytest.approx(2 / 3)


def test_outline_reordered_sections() -> None:
    ref = [(1, "T"), (2, "A"), (2, "B"), (2, "C")]
    cand = [(1, "T"), (2, "C"), (2, "A"), (2, "B")]
    assert outline_em_f1(ref, cand) == 1.0  # order-free
    assert outline_rouge_l(ref, cand) == pytest.approx(0.75)  # LCS T A B


@pytest.mark.parametrize("metric", [outline_em_f1, outline_rouge_l])
def test_outline_empty_edge_cases(metric) -> None:
    assert metric([], []) == 1.0
    assert metric([(1, "A")], []) == 0.0
    assert metric([], [(1, "A")]) == 0.0


# --- Continuity bundle --------------------------------------------------------------


def test_continuity_as_dict_rounds_and_names_fields() -> None:
    c = Continuity(1 / 3, 2 / 3, 0.123456, 1.0)
    assert c.as_dict() == {
        "content_rouge_l": 0.3333,
        "content_bleu4": 0.6667,
        "outline_rouge_l": 0.1235,
        "outline_em_f1": 1.0,
    }
    assert list(c.as_dict()) == [f.name for f in dataclasses.fields(Continuity)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.content_bleu4 = 0.0  # type: ignore[misc]


def test_continuity_on_edited_report() -> None:
    edited = REPORT.replace("after 2027 [4]", "by 2028 [5]") + "\n## 3. Risks\n\nSupply.\n"
    outline = [*OUTLINE, (2, "3. Risks")]
    c = continuity(REPORT, edited, OUTLINE, outline)
    assert 0.8 < c.content_rouge_l < 1.0
    assert 0.5 < c.content_bleu4 < 1.0
    assert c.outline_rouge_l == pytest.approx(8 / 9)  # 4 of 4 kept, 1 added
    assert c.outline_em_f1 == pytest.approx(8 / 9)


# --- properties ---------------------------------------------------------------------

_words = st.lists(st.sampled_from(["a", "b", "c", "d", "the", "cat", "é", "x1"]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(_words, _words)
def test_rouge_l_symmetric_and_bounded(ref_words: list[str], cand_words: list[str]) -> None:
    ref, cand = " ".join(ref_words), " ".join(cand_words)
    score = rouge_l_f1(ref, cand)
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(rouge_l_f1(cand, ref), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_metrics_bounded_on_arbitrary_text(ref: str, cand: str) -> None:
    assert 0.0 <= rouge_l_f1(ref, cand) <= 1.0
    assert 0.0 <= bleu4(ref, cand) <= 1.0
    assert rouge_l_f1(ref, ref) == 1.0
    assert bleu4(ref, ref) == 1.0
