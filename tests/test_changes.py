"""Tests for core.domain.changes: hashing, sentence units, claim diffs and change kinds."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.domain import changes
from core.domain.changes import ChangeResult, classify_change
from core.domain.claim_diff import ClaimChange, claim_diff
from core.domain.hashing import content_hash
from core.domain.keyfacts import header_fields
from core.domain.material import material_reasons
from core.domain.page_units import split_sentences

PEP_CORPUS = Path(__file__).resolve().parents[2] / "shared/corpora/peps/peps_corpus.jsonl.gz"

PEP_TEXT = """\
PEP: 999
Title: A Made-Up Proposal
Author: Jane Doe <jane@example.org>
Status: Accepted
Type: Standards Track
Content-Type: text/x-rst
Created: 01-Mar-2026
Python-Version: 3.15
Post-History: 02-Mar-2026


Abstract
========

This PEP proposes a new ``frobnicate`` builtin for Python.
It was discussed at length on the `Discourse forum <https://discuss.python.org/t/1234>`__.
The reference implementation lives in the CPython repository [1]_.

Motivation
==========

Developers currently write frobnication helpers by hand.
A survey of 142 projects found that most of them re-implement the same loop.
The helpers are slow, and they are often subtly wrong.

Specification
=============

The builtin takes one positional argument and returns a new list.
It raises ``TypeError`` for objects that are not iterable.
Support is planned for Python 3.15, with the feature freeze in Q3 2026.

References
==========

.. [1] https://github.com/python/cpython/pull/4242
"""


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# --------------------------------------------------------------------------- hashing


def test_content_hash_normalises_line_endings_only():
    assert content_hash("a\r\nb\r\n") == content_hash("a\nb\n")
    assert content_hash("a\nb") != content_hash("a\nb ")
    assert content_hash("A") != content_hash("a")
    assert len(content_hash("")) == 64


# --------------------------------------------------------------------------- sentences


def test_split_sentences_units():
    text = (
        "Title\n=====\n\nFirst sentence. Second one, e.g. with an abbreviation.\n"
        "Still the second   paragraph line!\n\n- item one\n- item two\n"
        "  continued\n\n1. Enumerated item. With two sentences.\n\n-----\n\nEnd."
    )
    assert split_sentences(text) == [
        "Title",
        "First sentence.",
        "Second one, e.g. with an abbreviation.",
        "Still the second paragraph line!",
        "- item one",
        "- item two continued",
        "1. Enumerated item.",
        "With two sentences.",
        "End.",
    ]


def test_split_sentences_header_fields_and_comments():
    text = (
        "PEP: 1\nTitle: Long\n  title continued\nStatus: Draft\n\n"
        "Body text.\n\n..\n   Local Variables:\n   mode: indented-text\n   End:\n"
    )
    assert split_sentences(text) == [
        "PEP: 1",
        "Title: Long title continued",
        "Status: Draft",
        "Body text.",
    ]


def test_split_sentences_drops_markup_only_lines():
    text = "+-----+-----+\n| a   | b   |\n+=====+=====+\n\n~~~~~~\n\n=== ===\nx   y\n=== ===\n"
    # table borders, a transition and rst simple-table rules are dropped; rows are units
    assert split_sentences(text) == ["| a | b |", "x y"]


def test_split_sentences_keeps_header_fields_whole():
    bullets = (
        "# Title\n\n* Proposal: [SE-1](x)\n* Status: **Accepted.** See the notes. Thanks\n"
        "* Authors: A,\n   B\n\nBody text. More text."
    )
    assert split_sentences(bullets) == [
        "# Title",
        "* Proposal: [SE-1](x)",
        "* Status: **Accepted.** See the notes. Thanks",
        "* Authors: A, B",
        "Body text.",
        "More text.",
    ]
    closed = "title: A page\nstatus: implementable. Really\n---\n\nBody. Text."
    assert split_sentences(closed) == [
        "title: A page",
        "status: implementable. Really",
        "Body.",
        "Text.",
    ]


# --------------------------------------------------------------------------- headers


def test_header_fields_rfc822_block():
    fields = header_fields(PEP_TEXT)
    assert fields["status"] == "Accepted"
    assert fields["python-version"] == "3.15"
    assert fields["title"] == "A Made-Up Proposal"
    assert "abstract" not in fields


def test_header_fields_continuation_and_yaml_front_matter():
    assert header_fields("Status: Final\nAuthor: A,\n   B\n\nText: not a header\n") == {
        "status": "Final",
        "author": "A, B",
    }
    yaml = '---\ntitle: "Hello"\nStatus: draft\ntags:\n  - a\n  - b\n---\n\n# Body\n'
    assert header_fields(yaml) == {"title": "Hello", "status": "draft", "tags": "a, b"}
    assert header_fields("Just prose: with a colon.\n\nMore.") == {}


# --------------------------------------------------------------------------- claims


def test_claim_diff_pairs_modified_sentences():
    old = "The sky is blue. Water is wet. Cats purr loudly."
    new = "The sky is blue. Water is very wet indeed. Dogs bark. Cats purr loudly."
    claims = claim_diff(old, new)
    assert [c.kind for c in claims] == ["modified", "added"]
    assert claims[0].before == "Water is wet."
    assert claims[0].after == "Water is very wet indeed."
    assert claims[1].after == "Dogs bark."


def test_claim_diff_removed_and_limit():
    old = "One fact here. Another fact there. A third fact."
    new = "One fact here."
    claims = claim_diff(old, new)
    assert [c.kind for c in claims] == ["removed", "removed"]
    assert claim_diff(old, new, limit=1) == claims[:1]


def test_claim_diff_ignores_markup_case_and_moves():
    old = "Read `the docs <http://a.example/x>`_ now. See **PEP 8**. Alpha beta.\n\nGamma delta."
    new = "Read the docs now. See PEP 8. Gamma delta.\n\nAlpha   beta."
    assert claim_diff(old, new) == []


def test_claim_change_round_trip():
    for claim in (ClaimChange("a", "b"), ClaimChange(None, "b"), ClaimChange("a", None)):
        data = claim.as_dict()
        assert data["kind"] == claim.kind
        assert ClaimChange.from_dict(json.loads(json.dumps(data))) == claim


# --------------------------------------------------------------------------- classification


def test_unchanged_computes_nothing(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("similarity must not be computed for unchanged text")

    monkeypatch.setattr(changes.fuzz, "ratio", boom)
    monkeypatch.setattr(changes, "claim_diff", boom)
    result = classify_change(PEP_TEXT, PEP_TEXT.replace("\n", "\r\n"))
    assert result.kind == "unchanged"
    assert result.similarity is None
    assert result.claims == []
    assert result.reasons == []


def test_figure_change_above_tau_is_material():
    new = _edit(PEP_TEXT, "A survey of 142 projects", "A survey of 128 projects")
    result = classify_change(PEP_TEXT, new)
    assert result.similarity is not None and result.similarity > 0.9
    assert result.kind == "material"
    assert "142 → 128" in result.reasons
    assert [c.kind for c in result.claims] == ["modified"]


def test_status_header_change_is_material():
    new = _edit(PEP_TEXT, "Status: Accepted", "Status: Superseded")
    result = classify_change(PEP_TEXT, new)
    assert result.similarity is not None and result.similarity > 0.99
    assert result.kind == "material"
    assert result.reasons == ["header Status: Accepted → Superseded"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Q3 2026", "Q1 2027", "Q3 2026 → Q1 2027"),
        ("Python 3.15", "Python 3.16", "3.15 → 3.16"),
        ("proposes a new", "finalizes a new", "proposes → finalizes"),
        ("are slow, and they are", "are slow, and they are not", "now adds “not”"),
    ],
)
def test_small_material_edits(old, new, expected):
    result = classify_change(PEP_TEXT, _edit(PEP_TEXT, old, new))
    assert result.kind == "material"
    assert expected in result.reasons


def test_housekeeping_is_minor():
    new = PEP_TEXT
    new = _edit(new, "Developers currently write", "Developers currrently write")  # typo
    new = _edit(
        new, "the `Discourse forum <https://discuss.python.org/t/1234>`__", "the Discourse forum"
    )
    new = _edit(new, "repository [1]_.", "repository [2]_.")  # footnote renumbered
    new = _edit(new, "Post-History: 02-Mar-2026", "Post-History: 02-Mar-2026, 09-Apr-2026")
    new = _edit(new, "Content-Type: text/x-rst\n", "")
    new = _edit(
        new,
        "https://github.com/python/cpython/pull/4242",
        "https://github.com/python/cpython/pull/4243",
    )
    new = _edit(new, "Specification\n=============", "Specification\n-------------")
    result = classify_change(PEP_TEXT, new)
    assert result.similarity is not None and result.similarity > 0.9
    assert result.kind == "minor", result.reasons
    assert result.reasons == []
    assert result.claims  # kept for display


MARKDOWN_PAGE = """\
# Service limits

Last updated: March 5, 2026

Uploads are limited to 10MB per file. The API allows 100 requests per minute.
Support for the v1 endpoint ends in Q3 2026.

Copyright © 2025 Example Corp.
"""


def test_page_furniture_is_minor():
    new = _edit(MARKDOWN_PAGE, "March 5, 2026", "April 2, 2026")
    new = _edit(new, "© 2025", "© 2026")
    result = classify_change(MARKDOWN_PAGE, new)
    assert result.kind == "minor", result.reasons


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("10MB per file", "20MB per file", "10MB → 20MB"),
        ("100 requests", "60 requests", "100 → 60"),
        ("v1 endpoint", "v2 endpoint", "v1 → v2"),
    ],
)
def test_figures_in_a_markdown_page(old, new, expected):
    assert expected in classify_change(MARKDOWN_PAGE, _edit(MARKDOWN_PAGE, old, new)).reasons


def test_a_new_section_of_prose_is_material_by_volume():
    words = " ".join(f"word{i}" for i in range(20))
    section = "\n\n## Fair use\n\n" + " ".join(
        f"Paragraph sentence {chr(65 + i % 26)} explains the rules in plain words, {words}."
        for i in range(7)
    )
    old = PEP_TEXT * 20  # keep the similarity above tau
    result = classify_change(old, old + section)
    assert result.similarity is not None and result.similarity >= 0.9
    assert result.kind == "material"
    assert any(r.startswith("text: ") for r in result.reasons)


def test_typo_fix_that_creates_a_decision_word_is_minor():
    old = "The proposal reached general accpetance among core developers."
    new = "The proposal reached general acceptance among core developers."
    assert material_reasons(old, new) == []
    assert classify_change(old, new).kind == "minor"
    for typo in ("acceptence", "accpetance"):
        assert material_reasons(new.replace("acceptance", typo), new) == []
    old = "The feature was implemnted in the next release of the compiler toolchain."
    assert material_reasons(old, old.replace("implemnted", "implemented")) == []


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("implementable", "implemented", "implementable → implemented"),
        ("provisional", "proposed", "provisional → proposed"),
        ("Accepted", "Acceptable", "Accepted → Acceptable"),
    ],
)
def test_lifecycle_word_changes_are_not_typo_fixes(before, after, expected):
    old = f"The design was marked {before} by the steering council after a long discussion."
    result = classify_change(old, old.replace(before, after))
    assert result.kind == "material"
    assert result.reasons == [expected]


def test_moved_figure_is_not_material():
    old = "Intro.\n\nWe measured 42 ms on average.\n\nOther text stays here.\n\nOutro."
    new = "Intro.\n\nOther text stays here.\n\nWe measured 42 ms on average.\n\nOutro."
    assert material_reasons(old, new) == []


def test_rewrite_is_changed_with_claims():
    new = "Something else entirely. Nothing in common with the old page at all."
    result = classify_change(PEP_TEXT, new)
    assert result.kind == "changed"
    assert result.similarity is not None and result.similarity < 0.9
    assert any(c.kind == "added" for c in result.claims)
    assert any(c.kind == "removed" for c in result.claims)
    # no truncation hides a claim, and reasons are computed for a rewrite too
    assert result.claims == claim_diff(PEP_TEXT, new)
    assert "header Status: Accepted → (none)" in result.reasons


def test_claims_are_not_truncated_by_default():
    old = " ".join(f"Fact number {i} holds." for i in range(300))
    new = " ".join(f"Fact number {i} changed." for i in range(300))
    assert len(claim_diff(old, new)) == 300
    assert len(classify_change(old, new).claims) == 300
    assert len(classify_change(old, new, limit=10).claims) == 10


def test_tau_controls_the_gate():
    new = _edit(PEP_TEXT, "A survey of 142 projects", "A survey of 128 projects")
    assert classify_change(PEP_TEXT, new, tau=1.0).kind == "changed"
    assert classify_change(PEP_TEXT, new, tau=0.0).kind == "material"


def test_change_result_as_dict_round_trip():
    new = _edit(PEP_TEXT, "Status: Accepted", "Status: Final")
    result = classify_change(PEP_TEXT, new)
    data = json.loads(json.dumps(result.as_dict()))
    assert data["kind"] == "material"
    assert ChangeResult.from_dict(data) == result


# --------------------------------------------------------------------------- real PEPs


def _pep_versions(wanted: set[int]) -> dict[int, dict[int, str]]:
    out: dict[int, dict[int, str]] = {}
    with gzip.open(PEP_CORPUS, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            pep = int(rec["pep"])
            if pep in wanted:
                out.setdefault(pep, {})[int(rec["as_of"][:4])] = rec["content"]
    return out


@pytest.mark.skipif(not PEP_CORPUS.exists(), reason="PEP corpus not available")
def test_known_small_material_edits_in_real_peps():
    versions = _pep_versions({563, 684, 602})
    cases = [
        (563, 2024, 2025, "header Status: Accepted → Superseded"),
        (684, 2023, 2024, "header Status: Accepted → Final"),
        (602, 2022, 2023, "1½ year → 2 years"),
    ]
    for pep, y0, y1, reason in cases:
        result = classify_change(versions[pep][y0], versions[pep][y1])
        assert result.similarity is not None and result.similarity >= 0.9, pep
        assert result.kind == "material", (pep, result.reasons)
        assert reason in result.reasons, (pep, result.reasons)


def test_figures_restyled_as_words_are_minor_but_changed_figures_are_not() -> None:
    text = (
        "LFP cells keep most of their capacity, and owners add new modules in years 5 to 10 "
        "to hold their contracted capacity. Other text stays the same here for a while longer."
    )
    assert classify_change(text, text.replace("5 to 10", "five to ten")).kind == "minor"
    changed = classify_change(text, text.replace("5 to 10", "six to ten"))
    assert changed.kind == "material" and changed.reasons == ["5 → six"]
