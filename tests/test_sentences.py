"""One sentence rule (core.domain.sentences) for a page's units, its passages and report text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain.page_units import split_sentences
from core.domain.passages import passages
from core.domain.sentences import (
    claim_units,
    sentence_spans,
    split_cited_sentences,
    split_prose,
    uncovered_sentences,
)

# the page split two ways before: core.domain.changes (its units) and core.domain.anchors
# (its passages)
PAGE = (
    "Compare (Sec. 6.11) The implementation works. It is _done._ Next one is here. "
    "Then :pep:`8` applies, etc.) Constructed later."
)
SENTENCES = [
    "Compare (Sec. 6.11) The implementation works.",  # passages cut after "Sec."
    "It is _done.",  # units ran on: "_" was no closer to them
    "Next one is here.",
    "Then :pep:`8` applies, etc.) Constructed later.",  # units lost the ")" after "etc."
]


def test_a_pages_units_and_its_passages_are_the_same_sentences() -> None:
    assert split_sentences(PAGE) == SENTENCES
    assert [p.text for p in passages(PAGE)] == SENTENCES


def test_a_sentence_starts_at_an_rst_role_and_goes_on_after_enumerators() -> None:
    assert split_prose("It is done. :pep:`8` says so. 1. Then (a) more. IV. Last.") == [
        "It is done.",
        ":pep:`8` says so.",
        "1. Then (a) more.",
        "IV. Last.",
    ]


def test_spans_are_offsets_and_leave_out_what_follows_the_stop() -> None:
    text = 'He said "yes." Then e.g. Smith left!  Done'
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        'He said "yes.',
        "Then e.g. Smith left!",
        "Done",
    ]
    assert list(sentence_spans(text, 15, 24)) == [(15, 24)]


_PROSE = st.lists(
    st.sampled_from(
        [
            "Word",
            "word",
            "e.g.",
            "etc.)",
            "1.",
            "(a)",
            "J.",
            "3.5",
            "end.",
            "yes!",
            '"quoted."',
            "_it._",
            "`x`.",
            ":pep:`8`",
            "\n",
            "  ",
            "\t",
        ]
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(_PROSE)
def test_the_strings_are_the_spans_with_whitespace_collapsed(text: str) -> None:
    spans = [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]
    assert split_prose(text) == [s for s in spans if s]


def test_a_report_sentence_goes_on_where_its_source_sentence_did() -> None:
    # the source splitter kept "… etc. The company …" as one sentence, so the offline
    # writer quotes it whole; the report splitter cut it after "etc." and the claim lost
    # its first half (the half without a citation was no claim at all)
    quoted = "They sell pumps, valves, etc. The company was founded in 1990."
    assert split_prose(quoted) == [quoted]
    cited = "They sell pumps, valves, etc. The company was founded in 1990 [3]."
    assert split_cited_sentences(cited) == [cited]


def test_report_sentences_end_with_their_citations() -> None:
    assert split_cited_sentences("A is approx. 5 MW [1]. B rose [2-3]. C [4] Then D.") == [
        "A is approx. 5 MW [1].",
        "B rose [2-3].",
        "C [4]",
        "Then D.",
    ]
    assert split_cited_sentences("Released [13]. 3.6 will follow. See (e.g. PyPI. Here) x.") == [
        "Released [13].",
        "3.6 will follow.",
        "See (e.g. PyPI. Here) x.",
    ]


def test_a_sentence_is_covered_by_the_citation_after_it_in_its_paragraph() -> None:
    body = (
        "Intro with no source.\n\n"
        "A is so [1]. A lead-in. B is so [2]. A closing remark.\n\n"
        "- a cited item [3]\n- an uncited item\n\n"
        "| Item | Status |\n| --- | --- |\n| A | Final [1] |\n\n"
        "```\ncode is no claim\n```"
    )
    assert uncovered_sentences(body) == [
        "Intro with no source.",
        "A closing remark.",
        "- an uncited item",
    ]
    assert claim_units(["A lead-in.", "B is so [2].", "Tail."]) == [
        "A lead-in. B is so [2].",
        "Tail.",
    ]
