"""Tests for core.domain.diffing: word diffs and their escaped HTML rendering."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain.diffing import (
    DIFF_CSS,
    DiffOp,
    diff_stats,
    inline_html,
    side_by_side_html,
    word_diff,
)

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"


def _old(ops: list[DiffOp]) -> str:
    return "".join(d.text for d in ops if d.op != "insert")


def _new(ops: list[DiffOp]) -> str:
    return "".join(d.text for d in ops if d.op != "delete")


# --------------------------------------------------------------------------- word_diff


def test_word_replaced():
    assert word_diff("The cat sat.", "The dog sat.") == [
        DiffOp("equal", "The "),
        DiffOp("delete", "cat"),
        DiffOp("insert", "dog"),
        DiffOp("equal", " sat."),
    ]


def test_phrase_replaced_as_a_whole():
    assert word_diff("a b c d", "a x y d") == [
        DiffOp("equal", "a "),
        DiffOp("delete", "b c"),
        DiffOp("insert", "x y"),
        DiffOp("equal", " d"),
    ]


def test_insertion_and_deletion():
    assert word_diff("hello", "hello world") == [
        DiffOp("equal", "hello"),
        DiffOp("insert", " world"),
    ]
    assert word_diff("one two three", "one three") == [
        DiffOp("equal", "one "),
        DiffOp("delete", "two "),
        DiffOp("equal", "three"),
    ]


def test_identical_and_empty_texts():
    assert word_diff("same text\nhere", "same text\nhere") == [DiffOp("equal", "same text\nhere")]
    assert word_diff("", "") == []
    assert word_diff("", "new") == [DiffOp("insert", "new")]
    assert word_diff("old", "") == [DiffOp("delete", "old")]


def test_ops_are_whole_tokens():
    ops = word_diff("Status: Accepted", "Status: Acceptable")
    assert ops == [
        DiffOp("equal", "Status: "),
        DiffOp("delete", "Accepted"),
        DiffOp("insert", "Acceptable"),
    ]


def test_many_distinct_tokens_and_private_use_text():
    old = " ".join(f"w{i}" for i in range(8000)) + " \ue000\ue001"
    new = old.replace("w4000", "changed")
    ops = word_diff(old, new)
    assert _old(ops) == old and _new(ops) == new
    assert DiffOp("delete", "w4000") in ops and DiffOp("insert", "changed") in ops


def test_fast_on_20kb_texts():
    words = [f"word{i % 997}" for i in range(3500)]
    old = " ".join(words)
    new_words = list(words)
    for i in range(0, len(new_words), 50):
        new_words[i] = "EDIT"
    new = " ".join(new_words)
    assert len(old) > 20_000
    ops = word_diff(old, new)
    assert _old(ops) == old and _new(ops) == new
    # word by word, not the coarse result diff-match-patch settles for at its time limit:
    # exactly the 70 replaced words are deleted, each replaced by EDIT
    assert [o.text for o in ops if o.op == "delete"] == words[::50]
    assert [o.text for o in ops if o.op == "insert"] == ["EDIT"] * len(words[::50])


def test_line_mode_for_long_texts():
    paragraphs = [f"Paragraph {i} says something about topic {i}.\n" for i in range(300)]
    old = "".join(paragraphs)
    edited = list(paragraphs)
    edited[150] = "Paragraph 150 now says something else entirely.\n"
    new = "".join(edited)
    ops = word_diff(old, new)
    assert _old(ops) == old and _new(ops) == new
    assert [d for d in ops if d.op != "equal"] == [
        DiffOp("insert", "now "),
        DiffOp("delete", "about topic 150"),
        DiffOp("insert", "else entirely"),
    ]


_text = st.text(
    alphabet=st.sampled_from(list("ab c\n.,<>&\"'\t") + ["é", "\ue000", "ß"]),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_text, _text)
def test_ops_reconstruct_both_sides(old, new):
    ops = word_diff(old, new)
    assert _old(ops) == old
    assert _new(ops) == new
    assert all(d.text for d in ops)
    assert all(a.op != b.op for a, b in zip(ops, ops[1:], strict=False))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["alpha ", "beta ", "gamma\n", "delta. ", "<b>"]), max_size=400))
def test_ops_reconstruct_long_texts(words):
    old = "".join(words)
    new = "".join(reversed(words))
    ops = word_diff(old, new)
    assert _old(ops) == old and _new(ops) == new


# --------------------------------------------------------------------------- HTML


def test_inline_html_marks_and_escapes():
    ops = word_diff("a < b\nok", "a > b\nok")
    html = inline_html(ops)
    assert html == 'a <del class="eg-del">&lt;</del><ins class="eg-ins">&gt;</ins> b<br>ok'


def test_inline_html_escapes_op_text():
    html = inline_html([DiffOp("equal", "x & y "), DiffOp("insert", SCRIPT), DiffOp("delete", IMG)])
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "x &amp; y " in html


def _tags(html: str) -> set[str]:
    return set(re.findall(r"<\s*/?\s*([a-zA-Z]+)", html))


def test_no_raw_markup_from_sources():
    cases = [
        (SCRIPT, IMG),
        (f"before {SCRIPT} after", f"before {IMG} after"),
        ("plain text", f"plain {SCRIPT}\n{IMG} text"),
        (f'"quoted" {IMG}', "'single' &amp; <b>bold</b>"),
    ]
    for old, new in cases:
        for html in (inline_html(word_diff(old, new)), side_by_side_html(old, new)):
            lowered = html.lower()
            assert "<script" not in lowered and "<img" not in lowered
            assert "<b>" not in lowered
            assert _tags(html) <= {"del", "ins", "br", "table", "thead", "tbody", "tr", "th", "td"}


def test_side_by_side_columns():
    html = side_by_side_html("The cat sat.\nDone.", "The dog sat.\nDone.")
    assert html.startswith('<table class="eg-diff">') and html.endswith("</table>")
    old_col, new_col = re.findall(r"<td class=\"eg-(?:old|new)\">(.*?)</td>", html)
    assert old_col == 'The <del class="eg-del">cat</del> sat.<br>Done.'
    assert new_col == 'The <ins class="eg-ins">dog</ins> sat.<br>Done.'


def test_diff_stats_counts_words():
    ops = word_diff("one two three, four", "one 2 three, four five")
    assert diff_stats(ops) == {"words_inserted": 2, "words_deleted": 1, "words_equal": 3}
    assert diff_stats([]) == {"words_inserted": 0, "words_deleted": 0, "words_equal": 0}


def test_css_covers_classes():
    for cls in (".eg-del", ".eg-ins", "eg-diff", "line-through"):
        assert cls in DIFF_CSS


def test_a_table_section_is_diffed_row_by_row_not_as_pipes() -> None:
    """The key facts: each item's status before and after, the changed words marked; a
    new item, a dropped one; the notes under the table word by word; a section that is
    not a table is left to the word diff."""
    from core.domain.diffing import table_diff_html

    old = (
        "| Item | Status |\n| --- | --- |\n| Harrow Bay | In construction [6] |\n"
        "| Ashgrove | On hold [9] |"
    )
    new = (
        "| Item | Status |\n| --- | --- |\n| Harrow Bay | Operational [6] |\n"
        "| Pellow Marsh | Approved [13] |\n\n**Past their date:**\n\n- Greyhaven: Funded [10]."
    )
    html = table_diff_html(old, new)
    assert html is not None and "| --- |" not in html and "|" not in html.split("</table>")[0]
    assert "<th>Item</th><th>Before</th><th>After</th>" in html
    assert (
        '<td>Harrow Bay</td><td><del class="eg-del">In construction</del> [6]</td>'
        '<td><ins class="eg-ins">Operational</ins> [6]</td>'
    ) in html
    assert '<td>Pellow Marsh</td><td></td><td><ins class="eg-ins">Approved [13]</ins></td>' in html
    assert '<td>Ashgrove</td><td><del class="eg-del">On hold [9]</del></td><td></td>' in html
    assert "Past their date" in html  # the notes, diffed below the table
    assert table_diff_html("Some prose [1].", new) is None


def test_a_table_diff_escapes_what_its_cells_hold() -> None:
    from core.domain.diffing import table_diff_html

    old = "| Item | Status |\n| --- | --- |\n| <b>x</b> | <script>alert(1)</script> |"
    new = "| Item | Status |\n| --- | --- |\n| <b>x</b> | <img src=x onerror=alert(1)> |"
    html = table_diff_html(old, new) or ""
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and html.count("&lt;") >= 4  # shown, as text
