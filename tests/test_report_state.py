"""Tests for core.domain.report_state: rendering and parsing Markdown reports."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain.citations import cited_markers
from core.domain.report_parse import REFERENCE_HEADINGS, parse_markdown
from core.domain.report_render import (
    VERSION_LINE,
    escape_heading_lines,
    render_markdown,
    strip_version_line,
)
from core.domain.report_state import RefEntry, ReportDoc, SectionDoc, make_section_keys
from core.errors import EvergreenError


def _doc(title: str, sections: list[tuple[str, int, str]], refs: list[RefEntry]) -> ReportDoc:
    keys = make_section_keys([h for h, _, _ in sections])
    return ReportDoc(
        title=title,
        sections=[SectionDoc(k, h, lv, b) for k, (h, lv, b) in zip(keys, sections, strict=True)],
        references=refs,
    )


def _shape(doc: ReportDoc) -> list[tuple[str, str, int, str]]:
    return [(s.key, s.heading, s.level, s.body) for s in doc.sections]


def _round_trip(doc: ReportDoc) -> tuple[str, ReportDoc]:
    first = render_markdown(doc)
    parsed = parse_markdown(first)
    assert render_markdown(parsed) == first
    return first, parsed


REFS = [
    RefEntry(1, "https://example.org/battery", "Battery review", "2024-03-01"),
    RefEntry(2, "https://example.org/cells", "Cell costs"),
    RefEntry(4, "https://en.wikipedia.org/wiki/Solid_(state)", "Solid state [wiki]", "2023-12-31"),
]

RICH = _doc(
    "Solid-state batteries",
    [
        ("", 0, "This report tracks solid-state batteries [1].\nIt is updated monthly."),
        ("Overview", 2, "Energy density could rise by 50% [1, 2].\n\n- first point [4]\n- second"),
        ("Chemistry", 3, "```python\n# not a heading\n## neither [3]\nx = [1]\n```\n\nAfter [2]."),
        ("Table", 4, "| cell | cost |\n|------|------|\n| A [1] | 10 |\n| B | 12 [2] |"),
        ("Empty section", 2, ""),
        ("Outlook", 2, "Commercial cells after 2027 [4].\n\n> quoted *emphasis* and `code [9]`"),
    ],
    REFS,
)


# --------------------------------------------------------------------------- render


def test_render_exact_form() -> None:
    doc = _doc(
        "My report",
        [("", 0, "Intro [1]."), ("A", 2, "Body [2]."), ("B", 3, "")],
        [
            RefEntry(2, "https://b.example", "Bee"),
            RefEntry(1, "https://a.example", "Ay", "2024-01-02"),
        ],
    )
    assert render_markdown(doc) == (
        "# My report\n\nIntro [1].\n\n## A\n\nBody [2].\n\n### B\n\n## References\n\n"
        "[1] [Ay](https://a.example) — fetched 2024-01-02\n\n[2] [Bee](https://b.example)\n"
    )


def test_render_without_references_has_no_references_section() -> None:
    text = render_markdown(_doc("T", [("A", 2, "x")], []))
    assert text == "# T\n\n## A\n\nx\n"
    assert "References" not in text


def test_render_escapes_reference_title_and_url() -> None:
    line = render_markdown(_doc("T", [], [REFS[2]])).splitlines()[-1]
    assert line == (
        "[4] [Solid state \\[wiki\\]](<https://en.wikipedia.org/wiki/Solid_(state)>)"
        " — fetched 2023-12-31"
    )


# --------------------------------------------------------------------------- round trips


def test_round_trip_rich_document() -> None:
    text, parsed = _round_trip(RICH)
    assert parsed.title == RICH.title
    assert _shape(parsed) == _shape(RICH)
    assert parsed.references == REFS
    assert "# not a heading" in text


def test_round_trip_title_only() -> None:
    _, parsed = _round_trip(_doc("Only a title", [], []))
    assert parsed.sections == [] and parsed.references == []


def test_round_trip_references_only() -> None:
    _, parsed = _round_trip(_doc("T", [], REFS))
    assert parsed.references == REFS


def test_round_trip_heading_like_body_lines_are_escaped() -> None:
    doc = _doc("T", [("A", 2, "text\n# not a section\nmore\n---\n## also not")], [])
    text, parsed = _round_trip(doc)
    assert [s.heading for s in parsed.sections] == ["A"]
    assert "\\# not a section" in text


def test_round_trip_closes_unterminated_fence() -> None:
    doc = _doc("T", [("A", 2, "```\n# code"), ("B", 2, "b [1]")], [REFS[0]])
    _, parsed = _round_trip(doc)
    assert [s.heading for s in parsed.sections] == ["A", "B"]
    assert parsed.sections[0].body == "```\n# code\n```"
    assert parsed.references == [REFS[0]]


def test_round_trip_awkward_headings() -> None:
    doc = _doc("C #", [("Trailing ##", 2, "x"), ("#", 3, ""), ("Tab\x07bell\nnewline", 2, "")], [])
    text, parsed = _round_trip(doc)
    assert parsed.title == "C \\#"
    assert [s.heading for s in parsed.sections] == ["Trailing \\##", "\\#", "Tabbell newline"]
    assert "\x07" not in text


def test_round_trip_parsed_foreign_document_is_a_fixed_point() -> None:
    foreign = (
        "Intro line with [a link](https://a.example).\n\nTitle-less\n=====\n\n"
        "Setext two\n---\n\nSee [x][lbl].\n\n[lbl]: https://l.example\n"
    )
    first = render_markdown(parse_markdown(foreign))
    assert render_markdown(parse_markdown(first)) == first


# --------------------------------------------------------------------------- property


_WORD = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)
_DATE = st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10)


def _phrase(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.lists(_WORD, min_size=lo, max_size=hi).map(" ".join)


_HEADING = _phrase(1, 5).filter(lambda h: h.casefold() not in REFERENCE_HEADINGS)


@st.composite
def _bodies(draw: st.DrawFn, markers: list[int]) -> str:
    marker_token = (
        st.lists(st.sampled_from(markers), min_size=1, max_size=3).map(
            lambda ms: "[" + ", ".join(map(str, ms)) + "]"
        )
        if markers
        else _WORD
    )
    token = st.one_of(_WORD, _WORD, marker_token, st.just("**bold**"), st.just("C#"))
    paragraph = st.lists(token, min_size=1, max_size=12).map(" ".join)
    block = st.one_of(
        paragraph,
        paragraph,
        st.lists(paragraph, min_size=1, max_size=3).map(lambda ps: "\n".join("- " + p for p in ps)),
        paragraph.map(lambda p: f"```\n# {p}\n```"),
        paragraph.map(lambda p: f"| a | b |\n|---|---|\n| {p} | x |"),
    )
    return "\n\n".join(draw(st.lists(block, min_size=0, max_size=3)))


@st.composite
def report_docs(draw: st.DrawFn) -> ReportDoc:
    markers = sorted(draw(st.lists(st.integers(1, 60), unique=True, max_size=6)))
    refs = [
        RefEntry(
            m,
            f"https://example.org/{draw(_WORD)}/{m}",
            draw(_phrase(1, 5)),
            draw(st.none() | _DATE),
        )
        for m in markers
    ]
    sections: list[tuple[str, int, str]] = []
    if draw(st.booleans()):
        preamble = draw(_bodies(markers))
        if preamble:
            sections.append(("", 0, preamble))
    for _ in range(draw(st.integers(0, 6))):
        sections.append((draw(_HEADING), draw(st.integers(1, 6)), draw(_bodies(markers))))
    return _doc(draw(_phrase(1, 6)), sections, refs)


@settings(max_examples=150, deadline=None)
@given(report_docs())
def test_property_render_parse_render_identity(doc: ReportDoc) -> None:
    text, parsed = _round_trip(doc)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert parsed.title == doc.title
    assert _shape(parsed) == _shape(doc)
    assert parsed.references == doc.references
    assert parsed.outline() == doc.outline()


@settings(max_examples=100, deadline=None)
@given(report_docs())
def test_property_version_line_round_trip_is_stable_and_never_repeated(doc: ReportDoc) -> None:
    for line in (
        "_Version 12 · as of 2026-07-15 · 36 claims, 0 stale_",
        "_Version 12 · as of 2026-07-15 · 36 claims, 0 stale · committed by Zoë M. on 2026-07-16_",
    ):
        text = render_markdown(doc, version_line=line)
        assert text.split("\n")[2] == line
        again = render_markdown(parse_markdown(text), version_line=line)
        assert again == text
        assert text.count(line) == 1


# --------------------------------------------------------------------------- version line

V3 = "_Version 3 · as of 2026-07-15 · 36 claims, 0 stale_"
SAMPLE_LINE = (
    "_Sample data written for Evergreen; not real reporting. Analyst report as of 2026-01-15._"
)


def test_render_with_a_version_line_puts_it_under_the_title() -> None:
    doc = _doc("T", [("", 0, "Intro [1]."), ("A", 2, "Body.")], [REFS[0]])
    assert render_markdown(doc, version_line=V3) == (
        f"# T\n\n{V3}\n\nIntro [1].\n\n## A\n\nBody.\n\n## References\n\n"
        "[1] [Battery review](https://example.org/battery) — fetched 2024-03-01\n"
    )
    assert render_markdown(doc) == render_markdown(doc, version_line=None)  # default: no line


@pytest.mark.parametrize(
    "sections",
    [
        [("", 0, SAMPLE_LINE), ("A", 2, "Body [1].")],
        [("A", 2, "Body [1].")],
        [],
    ],
)
def test_version_line_round_trip_keeps_it_once(sections: list[tuple[str, int, str]]) -> None:
    doc = _doc("T", sections, [REFS[0]])
    exported = render_markdown(doc, version_line=V3)
    imported = parse_markdown(exported)
    # the importer keeps the line as body text of the preamble …
    assert imported.sections[0].level == 0 and imported.sections[0].body.startswith(V3)
    # … and the next export replaces it with its own line instead of adding a second one
    v4 = "_Version 1 · as of 2026-10-15 · 2 claims, 1 stale, 1 unsupported_"
    again = render_markdown(imported, version_line=v4)
    assert again == render_markdown(doc, version_line=v4)
    assert V3 not in again and again.count("_Version ") == 1
    assert render_markdown(imported, version_line=V3) == exported
    if sections and sections[0][0] == "":
        assert again.count(SAMPLE_LINE) == 1  # the analyst's own line stays body text


def test_a_line_that_is_not_a_version_line_is_refused() -> None:
    doc = _doc("T", [("A", 2, "x")], [])
    for bad in ("Version 3", "_Version 3 · as of soon_", "_Version 3 · as of 2026-07-15 · <b>_"):
        with pytest.raises(ValueError, match="Not a version line"):
            render_markdown(doc, version_line=bad)


def test_strip_version_line_only_removes_a_leading_version_line() -> None:
    assert strip_version_line(f"{V3}\n\n{SAMPLE_LINE}") == SAMPLE_LINE
    assert strip_version_line(f"\n{V3}\n") == ""
    assert strip_version_line(f"{SAMPLE_LINE}\n\n{V3}") == f"{SAMPLE_LINE}\n\n{V3}"
    assert strip_version_line(SAMPLE_LINE) == SAMPLE_LINE
    assert not VERSION_LINE.match(SAMPLE_LINE)
    assert VERSION_LINE.match("_Version 1 · as of 2026-01-15_")


# --------------------------------------------------------------------------- reference lists


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "[1] Title. https://u.example/a (fetched 2024-01-01)",
            RefEntry(1, "https://u.example/a", "Title", "2024-01-01"),
        ),
        (
            "[1] [Title](https://u.example/a) — fetched 2024-01-01",
            RefEntry(1, "https://u.example/a", "Title", "2024-01-01"),
        ),
        ("1. [Title](https://u.example/a)", RefEntry(1, "https://u.example/a", "Title")),
        ("1. Title - https://u.example/a", RefEntry(1, "https://u.example/a", "Title")),
        (
            "- [1] Title, accessed 2023-02-03. https://u.example/a",
            RefEntry(1, "https://u.example/a", "Title", "2023-02-03"),
        ),
        ('[1]: https://u.example/a "Title"', RefEntry(1, "https://u.example/a", "Title")),
        (
            "[1] Title <https://u.example/a>. Retrieved 2022-10-11.",
            RefEntry(1, "https://u.example/a", "Title", "2022-10-11"),
        ),
        ("[1] https://u.example/a", RefEntry(1, "https://u.example/a", "https://u.example/a")),
        ("1) Book without a link.", RefEntry(1, "", "Book without a link")),
    ],
)
def test_reference_entry_forms(line: str, expected: RefEntry) -> None:
    doc = parse_markdown(f"# T\n\nBody [1].\n\n## References\n\n{line}\n")
    assert doc.references == [expected]
    assert [s.heading for s in doc.sections] == [""]


@pytest.mark.parametrize(
    "heading",
    [
        "References",
        "SOURCES",
        "Bibliography:",
        "Works cited",
        "Notes and sources",
        "7. References",
        "**Sources**",
    ],
)
def test_reference_heading_variants(heading: str) -> None:
    doc = parse_markdown(f"# T\n\n## A\n\nx [1]\n\n## {heading}\n\n1. [A](https://a.example)\n")
    assert doc.references == [RefEntry(1, "https://a.example", "A")]
    assert doc.outline() == [(2, "A")]


def test_reference_list_numbering_continuations_and_duplicates() -> None:
    text = (
        "# T\n\n## Sources\n\n"
        "1. [A](https://a.example)\n"
        "1. [B](https://b.example)\n"  # lazy ordered-list numbering: gets the next free marker
        "- [C](https://c.example)\n"  # unnumbered bullet with a URL
        "[5] Long title\n    https://e.example (fetched 2020-01-01)\n"  # continuation line
        "[5] Duplicate explicit marker https://dup.example\n"
    )
    refs = parse_markdown(text).references
    assert [(r.marker, r.url) for r in refs] == [
        (1, "https://a.example"),
        (5, "https://e.example"),
        (6, "https://b.example"),
        (7, "https://c.example"),
    ]
    assert refs[1] == RefEntry(5, "https://e.example", "Long title", "2020-01-01")


@pytest.mark.parametrize(
    "section",
    [
        "References were gathered by hand.\nSee [1] for the method.\nNo list here.\n",
        "References were gathered by hand.\nOnly one is listed:\n\n[1] A https://a.example\n",
    ],
)
def test_references_section_that_is_not_a_list_stays_a_section(section: str) -> None:
    text = "# T\n\n## Method\n\nx\n\n## References\n\n" + section
    doc = parse_markdown(text)
    assert doc.references == []
    assert doc.outline() == [(2, "Method"), (2, "References")]
    assert doc.sections[-1].body.startswith("References were gathered")


def test_references_heading_not_last_is_a_normal_section() -> None:
    doc = parse_markdown("# T\n\n## References\n\n[1] A https://a.example\n\n## After\n\nz\n")
    assert doc.references == []
    assert [s.heading for s in doc.sections] == ["References", "After"]


# --------------------------------------------------------------------------- citations


def test_inline_links_become_markers_reusing_same_url() -> None:
    text = (
        "# T\n\n## A\n\n"
        "See [the review](https://a.example) and [costs](https://b.example).\n"
        "Again [costs again](https://b.example), [[1]](https://a.example), [2](https://b.example)"
        '[x](https://c.example "Title attr").\n\n'
        "## References\n\n[1] [Review](https://a.example)\n"
    )
    doc = parse_markdown(text)
    assert doc.sections[0].body == (
        "See the review [1] and costs [2].\nAgain costs again [2], [1], [2] x [3]."
    )
    assert doc.references == [
        RefEntry(1, "https://a.example", "Review"),
        RefEntry(2, "https://b.example", "costs"),
        RefEntry(3, "https://c.example", "x"),
    ]
    assert doc.sections[0].markers == [1, 2, 3]


def test_links_in_code_images_and_relative_links_are_left_alone() -> None:
    body = (
        "![chart](https://img.example/c.png) `[code](https://a.example)` [rel](./page.md)\n"
        "[mail](mailto:a@b.c) \\[escaped](https://a.example)\n\n"
        "```\n[fenced](https://a.example)\n```\n\n    [indented](https://a.example)"
    )
    doc = parse_markdown(f"# T\n\n## A\n\n{body}\n")
    assert doc.sections[0].body == body
    assert doc.references == []


def test_reference_definitions_anywhere() -> None:
    text = (
        '# T\n\n[2]: https://two.example "Two"\n\nIntro [2].\n\n## A\n\nText [3] and [Smith][3]\n'
        "and [spec][w3c] and [w3c] and [Spec][].\n\n[3]: <https://three.example/a b>\n"
        "[w3c]: https://w3.example 'W3C'\n[spec]: https://w3.example\n\n"
        "## References\n\n[1] [One](https://one.example)\n"
    )
    doc = parse_markdown(text)
    assert doc.references == [
        RefEntry(1, "https://one.example", "One"),
        RefEntry(2, "https://two.example", "Two"),
        RefEntry(3, "https://three.example/a b", "https://three.example/a b"),
        RefEntry(4, "https://w3.example", "spec"),
    ]
    assert doc.sections[0].body == "Intro [2]."
    assert doc.sections[1].body == (
        "Text [3] and Smith [3]\nand spec [4] and w3c [4] and Spec [4].\n\n"
        "[w3c]: https://w3.example 'W3C'\n[spec]: https://w3.example"
    )


def test_bare_markers_without_reference_are_not_invented() -> None:
    doc = parse_markdown("# T\n\n## A\n\nClaim [7] and [1][2].\n")
    assert doc.references == []
    assert doc.sections[0].body == "Claim [7] and [1][2]."
    assert doc.sections[0].markers == [7, 1, 2]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a [1] b [2] c [1]", [1, 2]),
        ("a [3, 1] b [1][2]", [3, 1, 2]),
        ("a [2-4] b [1–2]", [2, 3, 4, 1]),
        ("none here [x] [0]", []),
        ("`[5]` ![6](i.png) \\[7] [8](https://x) [9]", [9]),
        ("```\n[1]\n```\n\n    [2]\n\n[3]", [3]),
        ("[1-100000] too long [4]", [4]),
    ],
)
def test_cited_markers(body: str, expected: list[int]) -> None:
    assert cited_markers(body) == expected


# --------------------------------------------------------------------------- structure


def test_file_without_headings_becomes_one_report_section() -> None:
    doc = parse_markdown("\n\nJust some notes [1].\n\nSecond paragraph.\n\n", default_title="Notes")
    assert doc.title == "Notes"
    assert _shape(doc) == [("report", "Report", 2, "Just some notes [1].\n\nSecond paragraph.")]
    assert doc.outline() == [(2, "Report")]


def test_fenced_hash_lines_are_not_headings() -> None:
    text = "# T\n\n## A\n\n```bash\n# comment\n## another\n```\n\n~~~\n# x\n~~~\n\n## B\n\nb\n"
    doc = parse_markdown(text)
    assert doc.outline() == [(2, "A"), (2, "B")]
    assert doc.sections[0].body == "```bash\n# comment\n## another\n```\n\n~~~\n# x\n~~~"


def test_nested_heading_syntax_is_not_a_section() -> None:
    doc = parse_markdown("# T\n\n## A\n\n> # quoted\n\n- # in a list\n\n    # indented code\n")
    assert doc.outline() == [(2, "A")]


def test_title_rules() -> None:
    assert parse_markdown("\n\n# Title\n\ntext\n").title == "Title"
    late = parse_markdown("Intro first.\n\n# Not the title\n\nx\n")
    assert late.title == "Untitled report"
    assert _shape(late) == [
        ("preamble", "", 0, "Intro first."),
        ("not-the-title", "Not the title", 1, "x"),
    ]
    h2_first = parse_markdown("## Section\n\n# Later h1\n", default_title="D")
    assert h2_first.title == "D"
    assert h2_first.outline() == [(2, "Section"), (1, "Later h1")]


def test_setext_headings() -> None:
    doc = parse_markdown("Big title\n=========\n\nIntro.\n\nPart\n----\n\nBody.\n")
    assert doc.title == "Big title"
    assert _shape(doc) == [("preamble", "", 0, "Intro."), ("part", "Part", 2, "Body.")]


def test_front_matter_title() -> None:
    text = '---\ntitle: "From front matter"\nauthor: x\n---\n\nIntro.\n\n## A\n\nb\n'
    doc = parse_markdown(text)
    assert doc.title == "From front matter"
    assert doc.sections[0].body == "Intro."
    assert "author" not in render_markdown(doc)


def test_front_matter_with_leading_h1_keeps_the_h1() -> None:
    doc = parse_markdown("---\ntitle: FM\n---\n# Visible\n\nx\n")
    assert doc.title == "Visible"
    assert _shape(doc) == [("preamble", "", 0, "x")]


def test_front_matter_without_headings() -> None:
    doc = parse_markdown("---\ntitle: Notes\n---\nplain text\n")
    assert doc.title == "Notes"
    assert doc.outline() == [(2, "Report")]


def test_thematic_break_at_top_is_not_front_matter() -> None:
    doc = parse_markdown("---\n\nSome text\n\n---\n\n## A\n\nx\n")
    assert doc.sections[0].body == "---\n\nSome text\n\n---"


def test_bodies_keep_internal_formatting_and_crlf_is_normalized() -> None:
    body = "Para with  two spaces  \nline two\n\n\n1. one\n2. two\n\n| a | b |\n|---|---|"
    doc = parse_markdown(("# T\n\n## A\n\n\n" + body + "\n\n\n## B\n").replace("\n", "\r\n"))
    assert doc.sections[0].body == body
    assert _shape(doc)[1] == ("b", "B", 2, "")


def test_control_characters_removed_from_title_and_headings() -> None:
    doc = parse_markdown("# Ti\x01tle\x7f\n\n## He\x1bading\tx\n\nbody\n")
    assert doc.title == "Title"
    assert doc.sections[0].heading == "Heading\tx"


@pytest.mark.parametrize("text", ["", "   \n\t\n  ", "\n"])
def test_empty_file_raises(text: str) -> None:
    with pytest.raises(EvergreenError, match="The Markdown file is empty: nothing to import."):
        parse_markdown(text)


def test_only_front_matter_without_title_raises() -> None:
    with pytest.raises(EvergreenError):
        parse_markdown("---\nauthor: x\n---\n\n")


def test_ten_thousand_headings() -> None:
    parts = ["# Big"] + [f"## Part {i}\n\nText {i} [1]." for i in range(10_000)]
    parts.append("## References\n\n[1] [One](https://one.example)")
    doc = parse_markdown("\n\n".join(parts))
    assert len(doc.sections) == 10_000
    assert doc.sections[-1].key == "part-9999"
    assert doc.references == [RefEntry(1, "https://one.example", "One")]


def test_large_document_with_many_links() -> None:
    para = "Lorem ipsum [1] dolor [sit](https://e.example/a) amet `code` elit.\n"
    text = "# T\n\n" + "".join(f"## S{i}\n\n" + para * 40 + "\n" for i in range(1500))
    doc = parse_markdown(text)
    assert len(doc.sections) == 1500
    assert doc.references == [RefEntry(1, "https://e.example/a", "sit")]


# --------------------------------------------------------------------------- helpers


def test_make_section_keys() -> None:
    assert make_section_keys(
        [
            "",
            "Overview",
            "Overview",
            "overview-2",
            "Café & Crème!",
            "!!!",
            "1.2 Cost_of cells",
            "Overview",
        ]
    ) == [
        "preamble",
        "overview",
        "overview-2",
        "overview-2-2",
        "café-crème",
        "section",
        "1-2-cost-of-cells",
        "overview-3",
    ]


def test_escape_heading_lines() -> None:
    body = "# one\n   ## two\n#nospace\n```\n# fenced\n```\n- # list\npara\n===\n\n---"
    escaped = escape_heading_lines(body)
    assert escaped == (
        "\\# one\n   \\## two\n#nospace\n```\n# fenced\n```\n- # list\npara\n\\===\n\n---"
    )
    assert escape_heading_lines(escaped) == escaped
    doc = parse_markdown("# T\n\n## A\n\n" + escaped + "\n")
    assert doc.outline() == [(2, "A")]


def test_escape_heading_lines_handles_heading_then_rule() -> None:
    # Escaping '# a' alone would turn it into a setext heading underlined by '---'.
    escaped = escape_heading_lines("# a\n---")
    assert parse_markdown("# T\n\n## A\n\n" + escaped + "\n").outline() == [(2, "A")]


def test_outline_and_markers() -> None:
    assert RICH.outline() == [
        (2, "Overview"),
        (3, "Chemistry"),
        (4, "Table"),
        (2, "Empty section"),
        (2, "Outlook"),
    ]
    assert [s.markers for s in RICH.sections] == [[1], [1, 2, 4], [2], [1, 2], [], [4]]
