"""Tests for core.domain.headers (front matter and RFC-822 blocks), core.domain.links and
core.domain.reference_entries, and for their callers: key facts, folder corpora, report import."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain import headers
from core.domain.claim_diff import normalise
from core.domain.header_blocks import header_blocks
from core.domain.headers import MAX_VALUE_CHARS, front_matter, read_rfc822, split_front_matter
from core.domain.keyfacts import header_fields
from core.domain.links import MD_LINK, strip_md_links
from core.domain.reference_entries import entry_number, parse_entry_text, read_entries
from core.domain.report_parse import parse_markdown
from core.sources.corpus_files import read_folder


def _lines(text: str) -> list[str]:
    return text.split("\n")


# --------------------------------------------------------------------------- RFC-822


def test_rfc822_unfolds_continuation_lines_and_stops_at_a_blank_line() -> None:
    lines = _lines("Status: Final\nPost-History: 21-Mar-2001,\n     07-Apr-2013\n\nText: x")
    fields, end = read_rfc822(lines)
    assert [(f.label, f.value, f.first, f.last) for f in fields] == [
        ("Status", "Final", 0, 0),
        ("Post-History", "21-Mar-2001, 07-Apr-2013", 1, 2),
    ]
    assert end == 3


def test_rfc822_labels_may_hold_spaces_but_an_address_is_no_field() -> None:
    fields, end = read_rfc822(_lines("Review Manager: Ben\nStatus: Draft\nhttps://e.org/x\n"))
    assert [(f.label, f.value) for f in fields] == [("Review Manager", "Ben"), ("Status", "Draft")]
    assert end == 2


def test_rfc822_decodes_encoded_words() -> None:
    text = "Status: Final\nAuthor: =?utf-8?q?Caf=C3=A9?= Team\n\nBody.\n"
    assert header_fields(text)["author"] == "Café Team"


def test_a_line_separator_inside_a_value_does_not_end_the_block() -> None:
    fields, _ = read_rfc822(["Title: one\u2028two", "Status: Draft"])
    assert [(f.label, f.value) for f in fields] == [("Title", "one two"), ("Status", "Draft")]


# --------------------------------------------------------------------------- front matter


@pytest.mark.parametrize(
    ("yaml_lines", "expected"),
    [
        ("tags:\n  - a\n  - b", {"tags": "a, b"}),  # was "a b"
        ("tags: [a, b]", {"tags": "a, b"}),  # was "[a, b]"
        ("status: Draft # to be reviewed", {"status": "Draft"}),  # the comment was kept
        ("author:\n  name: A\n  email: b", {"author": "name: A, email: b"}),
        ("title: 'It''s'", {"title": "It's"}),
        ('"Status": Accepted', {"status": "Accepted"}),  # a quoted key: no block before
    ],
)
def test_front_matter_values_are_read_as_yaml(yaml_lines: str, expected: dict[str, str]) -> None:
    page = f"---\n{yaml_lines}\n---\n\nBody text.\n"
    assert header_fields(page) == expected


def test_front_matter_keeps_each_fields_lines() -> None:
    lines = _lines("---\ntitle: T\ntags:\n  - a\n  - b\n# a comment\n---\nBody")
    found = front_matter(lines)
    assert found is not None and found.error is None
    assert [(f.label, f.first, f.last) for f in found.fields] == [("title", 1, 1), ("tags", 2, 4)]
    assert found.data == {"title": "T", "tags": ["a", "b"]}
    assert found.end == 6


def test_front_matter_that_is_not_yaml_is_read_line_by_line() -> None:
    lines = _lines("---\ntitle: Part 2: the sequel\ntags:\n- a\n- b\n---\n")
    found = front_matter(lines)
    assert found is not None and found.error is not None and found.data == {}
    assert [(f.label, f.value) for f in found.fields] == [
        ("title", "Part 2: the sequel"),
        ("tags", "a, b"),
    ]


def test_prose_between_two_thematic_breaks_is_not_front_matter() -> None:
    assert front_matter(_lines("---\n\nSome text\n\nMore: text here\n---\n")) is None
    assert front_matter(_lines("---\ntitle: no end\n")) is None


def test_front_matter_then_a_header_block_are_both_read() -> None:
    page = "---\ntitle: X\n---\nStatus: Final\nAuthor: A,\n  B\n\nBody.\n"
    assert [b.layout for b in header_blocks(page)] == ["front-matter", "rfc822"]
    assert header_fields(page) == {"title": "X", "status": "Final", "author": "A, B"}


def test_a_link_whose_address_holds_parentheses_is_read_whole() -> None:
    page = "# T\n\n* Proposal: [SE-1](https://e.org/a_(b))\n* Status: [Accepted](https://e.org/s_(x))\n"
    assert header_fields(page) == {"proposal": "SE-1", "status": "Accepted"}  # was "Accepted)"
    assert normalise("See [the page](https://en.wikipedia.org/wiki/X_(y)).") == "see the page."
    assert strip_md_links("a ![img](p.png) [b](u) c") == "a img b c"


def test_link_text_holding_brackets_is_read_as_a_link() -> None:
    # a bullet header listing earlier revisions as bracketed numbers
    page = "# T\n\n* Status: Final\n* Previous Revisions: [[1]](https://e.org/1), [[2]](https://e.org/2)\n"
    assert header_fields(page)["previous revisions"] == "[1], [2]"  # was the raw Markdown


# --------------------------------------------------------------------------- folder corpora


@pytest.mark.parametrize(
    ("text", "meta", "body"),
    [
        ("\n---\ntitle: T\n---\nbody\n", {"title": "T"}, "body\n"),  # a blank line first
        ("---\n---\n# T\nx\n", {}, "# T\nx\n"),  # an empty block
        ("---\ntitle: x\n...\nbody\n", {"title": "x"}, "body\n"),  # YAML's document end
        ("---\n\nSome text\n\n---\nbody\n", {}, "---\n\nSome text\n\n---\nbody\n"),  # was refused
    ],
)
def test_split_front_matter(text: str, meta: dict[str, str], body: str) -> None:
    assert split_front_matter(text) == (meta, body)


def test_split_front_matter_refuses_fields_that_are_not_yaml() -> None:
    with pytest.raises(ValueError, match="not valid YAML"):
        split_front_matter("---\ntitle: a: b\n---\nbody\n")


def test_folder_corpus_reads_front_matter_after_a_blank_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("\n---\ntitle: From meta\ndate: 2025-02-03\n---\n# H\n\nText.\n")
    skipped: list[str] = []
    (record,) = list(read_folder(tmp_path, "c", skipped, skip_bad=False))
    assert record.title == "From meta"
    assert record.as_of.date().isoformat() == "2025-02-03"
    assert record.content == "# H\n\nText.\n"


# --------------------------------------------------------------------------- report import


def test_report_front_matter_after_a_blank_line_gives_the_title() -> None:
    doc = parse_markdown("\n---\ntitle: From front matter\n---\n\nIntro.\n")
    assert doc.title == "From front matter"
    assert [s.body for s in doc.sections] == ["Intro."]


def test_report_text_between_thematic_breaks_is_kept() -> None:
    doc = parse_markdown("---\nNote: x\n\nprose here\n---\n\n## A\n\nb\n")
    assert "Note: x" in doc.sections[0].body  # was dropped as front matter


# --------------------------------------------------------------------------- reference entries


def test_entry_number_reads_bracketed_entries_only() -> None:
    assert entry_number("[3] [Title](https://e.org) — fetched 2026-01-15") == 3
    assert entry_number("[^12] A note") == 12
    assert entry_number("3. An ordinal") is None
    assert entry_number("Text [3]") is None


def test_read_entries_needs_most_lines_to_be_entries() -> None:
    assert read_entries(["[1] A https://a.org", "  continued", "", "- https://b.org"]) == [
        (1, True, "A https://a.org continued"),
        (None, False, "https://b.org"),
    ]
    assert read_entries(["[1] A", "prose", "more prose"]) is None


def test_parse_entry_text_reads_a_link_with_parentheses() -> None:
    url, title, fetched = parse_entry_text("[X (y)](https://e.org/X_(y)) — fetched 2026-01-15")
    assert (url, title, fetched) == ("https://e.org/X_(y)", "X (y)", "2026-01-15")


def test_md_link_marks_images() -> None:
    m = MD_LINK.search("see ![alt](img.png)")
    assert m is not None and m.group("image") == "!" and m.group("text") == "alt"


def test_yaml_aliases_cannot_blow_a_value_up() -> None:
    rows = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        rows.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    page = "---\n" + "\n".join(rows) + "\n---\nbody\n"
    fields = header_fields(page)
    assert fields["a"] == ", ".join(["x"] * 9)
    assert MAX_VALUE_CHARS - 2 <= len(fields["h"]) <= MAX_VALUE_CHARS  # 9**8 items, cut


# --------------------------------------------------------------------------- unfolding


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(  # mostly values the fast path takes, some it leaves to the parser
                st.text(alphabet=" \t=?:;,()\"'abcXYZ019-", max_size=30),
                st.text(alphabet=st.characters(max_codepoint=0x2100), max_size=30),
            ),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_plain_values_unfold_as_the_parser_unfolds_them(groups: list[list[str]]) -> None:
    """The fast path for one-line printable values gives what ``email.parser`` gives."""
    groups = [[line.replace("\n", " ") for line in lines] for lines in groups]
    assert headers._unfold(groups) == headers._parse_values(groups)


def test_a_plain_value_loses_only_its_leading_blanks() -> None:
    assert headers._unfold([["  Final  "], ["a\tb"], ["=?utf-8?q?caf=C3=A9?="]]) == [
        "Final  ",
        "a\tb",
        "café",
    ]
