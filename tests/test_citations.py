"""The one [n] citation grammar (core.domain.citations) and the callers that disagreed before it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.app.view_text import markdown_html
from core.domain.citations import (
    cited_markers,
    find_citations,
    format_citation,
    is_citation_text,
    renumber_citations,
    rewrite_citations,
    strip_citations,
)
from core.domain.metrics import tokenize
from core.domain.prune import drop_markers
from core.writers.base import ClaimUpdate, EvidenceChange
from core.writers.offline import OfflineWriter
from core.writers.reply_checks import filter_citations

# --------------------------------------------------------------------------- the grammar


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A [1-3]. B [4, 5].", [1, 2, 3, 4, 5]),
        ("a [2; 7] b [3–4] c [1, 6-7]", [2, 7, 3, 4, 1, 6]),
        ("a [1][2] b", [1, 2]),
        ("[see [1]](https://x) [2]", [2]),  # link text is a link's
        ("[1](https://x) [2] (three)", [2]),  # "[2] (three)": not a link, a citation
        ("![1](x.png) ![2] [3]", [3]),  # images and an image's start
        ("`[1]` and ``a [2] b`` [3]", [3]),  # code spans
        ("```\n[1]\n```\n\n    [2]\n\n- item [3]", [3]),  # code blocks
        ("\\[1\\] \\[2] [3]", [3]),  # escaped brackets
        ("[a][1] and [1]\n\n[1]: https://x", []),  # a defined [1] is a reference link
        ("[0] [3-1] [1-100000] [x] [1-2-3]", []),  # name nothing / not the grammar
        ("a [1,\n2] b", [1, 2]),  # a group may wrap
    ],
)
def test_which_brackets_cite(text: str, expected: list[int]) -> None:
    assert cited_markers(text) == expected


def test_spans_are_offsets_in_the_text() -> None:
    text = "Intro\r\n\r\nA claim [1-3] and `[9]` another [4; 5]."
    found = find_citations(text)
    assert [text[c.start : c.end] for c in found] == ["[1-3]", "[4; 5]"]
    assert [c.markers for c in found] == [(1, 2, 3), (4, 5)]


def test_strip_takes_the_blank_before_and_keeps_links_and_code() -> None:
    text = "Rose [1, 2]. See [the review](https://r.example) and `x[3]` [4][5]."
    assert strip_citations(text) == "Rose. See [the review](https://r.example) and `x[3]`."


def test_rewrite_keeps_the_space_before_a_citation_that_stays() -> None:
    drop_nine = lambda c: "" if c.markers == (9,) else None  # noqa: E731
    assert rewrite_citations("a [9][1] b", drop_nine) == "a [1] b"
    assert rewrite_citations("a [9][8] b", lambda c: "") == "a b"


def test_renumber_sorts_and_normalises_each_citation() -> None:
    text = "A [3-4]. B [4; 1] `[3]`."
    assert renumber_citations(text, {3: 1, 1: 3}) == "A [1, 4]. B [3, 4] `[3]`."


def test_is_citation_text() -> None:
    assert is_citation_text(" 1, 2 ") and is_citation_text("3–5")
    assert not is_citation_text("0") and not is_citation_text("1-2-3")
    assert not is_citation_text("see 1")


# --------------------------------------------------------------------------- properties

_MARKER = st.integers(min_value=1, max_value=60)
_ITEM = st.one_of(
    _MARKER.map(lambda n: ((n,), str(n))),
    st.tuples(_MARKER, st.integers(0, 4), st.sampled_from(["-", "–", " - "])).map(
        lambda t: (tuple(range(t[0], t[0] + t[1] + 1)), f"{t[0]}{t[2]}{t[0] + t[1]}")
    ),
)
_SEPARATOR = st.sampled_from([", ", ",", "; ", " , "])


@st.composite
def _citation(draw: st.DrawFn) -> tuple[tuple[int, ...], str]:
    items = draw(st.lists(_ITEM, min_size=1, max_size=3))
    sep = draw(_SEPARATOR)
    markers = tuple(dict.fromkeys(n for numbers, _ in items for n in numbers))
    return markers, "[" + sep.join(written for _, written in items) + "]"


_WORD = st.text(alphabet="abcdefghij XYZ.,", min_size=1, max_size=12)
_NOT_CITATIONS = st.sampled_from(
    [
        "[the report](https://r.example/a)",
        "[7](https://seven.example)",
        "![8](chart.png)",
        "`[9]`",
        "\\[10\\]",
        "[word]",
        "[1-2-3]",
    ]
)


@st.composite
def _text(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]], list[str]]:
    """A paragraph of words, citations and things that are not citations; the markers of
    each citation written, and the non-citations written."""
    pieces: list[str] = []
    cited: list[tuple[int, ...]] = []
    others: list[str] = []
    for kind in draw(st.lists(st.sampled_from(["word", "cite", "other"]), max_size=12)):
        if kind == "word":
            pieces.append(draw(_WORD))
        elif kind == "cite":
            markers, written = draw(_citation())
            cited.append(markers)
            pieces.append(written)
        else:
            other = draw(_NOT_CITATIONS)
            others.append(other)
            pieces.append(other)
    # a paragraph: four leading spaces would make it an indented code block, where
    # nothing is a citation (CommonMark)
    return " ".join(pieces).lstrip(), cited, others


@settings(max_examples=300, deadline=None)
@given(_text())
def test_the_markers_found_are_the_markers_written(case: tuple) -> None:
    text, cited, _others = case
    assert [c.markers for c in find_citations(text)] == cited
    assert cited_markers(text) == list(dict.fromkeys(n for group in cited for n in group))


@settings(max_examples=300, deadline=None)
@given(_text())
def test_stripping_keeps_every_link_image_code_span_and_escape(case: tuple) -> None:
    text, _cited, others = case
    stripped = strip_citations(text)
    assert find_citations(stripped) == ()
    rest = stripped
    for other in others:  # in order, each once
        assert other in rest
        rest = rest[rest.index(other) + len(other) :]


@settings(max_examples=300, deadline=None)
@given(_text(), st.permutations(list(range(1, 65))))
def test_renumbering_round_trips(case: tuple, order: list[int]) -> None:
    text, cited, _others = case
    forward = dict(zip(range(1, 65), order, strict=True))
    back = {new: old for old, new in forward.items()}
    there = renumber_citations(text, forward)
    assert [set(c.markers) for c in find_citations(there)] == [
        {forward[n] for n in group} for group in cited
    ]
    identity = {n: n for n in range(1, 65)}
    assert renumber_citations(there, back) == renumber_citations(text, identity)


@settings(max_examples=200, deadline=None)
@given(st.lists(_citation(), min_size=1, max_size=4))
def test_a_written_citation_reads_back(groups: list) -> None:
    text = " and ".join(format_citation(markers) for markers, _ in groups)
    assert [c.markers for c in find_citations(text)] == [markers for markers, _ in groups]


# --------------------------------------------------------------------------- callers that disagreed


def test_the_llm_filter_leaves_code_and_non_citations_alone() -> None:
    # before: "[1-2-3]" was read as a citation of 1, 2, 3 and "`[9]`" lost its [9]
    assert filter_citations("a [1-2-3] b `[9]` c [9].", {1}) == ("a [1-2-3] b `[9]` c.", [9])


def test_dropping_a_source_edits_a_range_citation() -> None:
    # before: prune read no marker in "[1-3]", so the sentence kept citing dropped source 2
    body = "A is true [1-3]. B is true [4]."
    assert drop_markers(body, [2]) == "A is true [1, 3]. B is true [4]."
    assert drop_markers(body, [1, 2, 3]) == "B is true [4]."


def test_the_app_links_range_citations_and_not_escaped_brackets() -> None:
    html = markdown_html("A [1-3]. B \\[2\\] and `[1]` [1; 2].", {1, 2, 3})
    # before: "[1-3]" stayed plain and the escaped "\[2\]" became a link
    assert '[<a class="eg-cite" href="#ref-1">1</a>-<a class="eg-cite" href="#ref-3">3</a>]' in html
    assert "B [2] and <code>[1]</code>" in html
    assert html.count("eg-cite") == 4


def test_continuity_tokens_drop_citations_in_every_form() -> None:
    text = "Cells [1-3] improved [4](https://x) here[^2] and [5]\n\n[5]: https://five"
    assert tokenize(text) == ["cells", "improved", "here", "and"]


PASSAGE_OLD = "The Kestrel Flats project has a capacity of 100 MW."
PASSAGE_NEW = "The Kestrel Flats project has a capacity of 160 MW."


def test_the_offline_writer_revises_a_range_cited_sentence() -> None:
    sentence = "The Kestrel Flats project has a capacity of 100 MW [1-3]."
    body = f"{sentence} The Other project is approved [4, 5]."
    update = ClaimUpdate(sentence, 2, "edited", ((PASSAGE_OLD, PASSAGE_NEW),))
    draft = OfflineWriter().revise_section("q", "h", body, [], [], [update])
    # before: "… 160 MW [1-3][1][2][3]." (the range was not read as citations)
    assert draft.body == (
        "The Kestrel Flats project has a capacity of 160 MW [1, 2, 3]. "
        "The Other project is approved [4, 5]."
    )
    untouched = OfflineWriter().revise_section("q", "h", body, [], [], [])
    assert untouched.body == body and untouched.markers == [1, 2, 3, 4, 5]  # before: [4, 5]


def test_the_offline_writer_states_news_of_a_range_cited_source() -> None:
    from core.writers.base import Evidence

    page = "Title: Kestrel Flats\nStatus: Approved\nType: Storage\n\nThe project is approved."
    new = Evidence(2, "https://k.example", "Kestrel Flats", page)
    change = EvidenceChange(2, "material", reasons=("header Status: Proposed → Approved",), new=new)
    body = "Kestrel Flats is a storage project [1-3]."
    draft = OfflineWriter().revise_section("q", "h", body, [change], [], [])
    # before: no sentence was found citing source 2, so its new status went unsaid
    # (its Type is no lifecycle field: the status line states what the page declares of
    # where it stands)
    assert draft.body == "Kestrel Flats — Status: Approved [2]. " + body


def test_news_of_a_page_cited_only_in_another_pages_paragraph_gets_a_paragraph_of_its_own() -> None:
    """Five release schedules share "The schedule primarily concerns itself with PEP-sized
    items"; each year one of them changed status, and its status line went before that
    sentence, inside the 3.5 schedule's paragraph, until it held five status lines."""
    from core.writers.base import Evidence

    page = "Title: Python 3.8 Release Schedule\nStatus: Final\nType: Informational\n\nText."
    new = Evidence(2, "https://p.example/569", "Python 3.8 Release Schedule", page)
    change = EvidenceChange(2, "material", reasons=("header Status: Active → Final",), new=new)
    own = (
        "Python 3.5 Release Schedule — Status: Final [1]. "
        "This document describes the development and release schedule for Python 3.5 [1]. "
        "The schedule primarily concerns itself with PEP-sized items [1, 2]."
    )
    after = "The release managers publish dates for each beta release of Python [3]."
    body = f"{own}\n\n{after}"
    draft = OfflineWriter().revise_section("q", "h", body, [change], [], [])
    line = "Python 3.8 Release Schedule — Status: Final [2]."
    assert draft.body == f"{own}\n\n{line}\n\n{after}"
    # a year later another of them changes: its line goes after the one set apart before
    page = page.replace("3.8", "3.6").replace("Status: Final", "Status: Retired")
    new = Evidence(4, "https://p.example/494", "Python 3.6 Release Schedule", page)
    change = EvidenceChange(4, "material", reasons=("header Status: Final → Retired",), new=new)
    body = draft.body.replace("[1, 2]", "[1, 2, 4]")
    later = OfflineWriter().revise_section("q", "h", body, [change], [], [])
    line2 = "Python 3.6 Release Schedule — Status: Retired [4]."
    assert later.body == f"{own.replace('[1, 2]', '[1, 2, 4]')}\n\n{line}\n\n{line2}\n\n{after}"
