"""Exports a reader can find their way in: page numbers on every PDF page, each [n] in the
PDF a link to its References entry, and download names that keep the title's accents
but open on any system."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from core.app.export import (
    MAX_NAME_BYTES,
    MAX_NAME_CHARS,
    export_file_name,
    safe_file_stem,
    version_markdown,
)
from core.domain.pdf import markdown_to_pdf
from core.errors import EvergreenError
from core.store.db import session_scope
from core.store.repository import get_report
from core.workspace import load_sample

FILLER = ("Storage keeps growing across the interconnection. " * 40 + "\n\n") * 6
DOC = f"""# Storage 储能

Cited once [1], twice [1, 2], a range [2-3] and a missing entry [9].
Not citations: `[1]` in code, an escaped \\[2], a link [the tracker [2]](https://example.org/t).

{FILLER}
## References

[1] [Tessaly index](https://example.org/tessaly) — fetched 2026-01-15

[2] [Gridtally tracker](https://example.org/tracker) — fetched 2026-01-15

[3] A book without an address
"""


def goto_links(doc: pymupdf.Document) -> list[tuple[int, str, int, str]]:
    """(page, link text, target page, text at the target) of every internal link."""
    out = []
    for page in doc:
        for link in page.get_links():
            if link["kind"] != pymupdf.LINK_GOTO:
                continue
            target = doc[link["page"]]
            to = link["to"]
            at = target.get_textbox(pymupdf.Rect(to.x - 2, to.y - 2, to.x + 40, to.y + 14))
            out.append((page.number, page.get_textbox(link["from"]).strip(), link["page"], at))
    return out


def test_every_pdf_page_has_its_number_at_the_foot() -> None:
    with pymupdf.open(stream=markdown_to_pdf(DOC), filetype="pdf") as doc:
        assert doc.page_count >= 2
        for page in doc:
            label = f"{page.number + 1} / {doc.page_count}"
            foot = page.get_textbox(
                pymupdf.Rect(0, page.rect.height - 36, page.rect.width, page.rect.height)
            )
            assert foot.strip() == label


def test_citations_link_to_their_reference_entry() -> None:
    with pymupdf.open(stream=markdown_to_pdf(DOC), filetype="pdf") as doc:
        links = goto_links(doc)
        entries = {
            n: next(
                i
                for i, p in enumerate(doc)
                if f"[{n}] " in p.get_text() and "fetched" in p.get_text()
            )
            for n in (1, 2)
        }
    texts = [text for _page, text, _to, _at in links]
    # [1] whole; in [1, 2] each number; in [2-3] both ends ([3] has an entry too); not [9]
    assert texts[0] == "[1]"
    assert [t.strip("[]") for t in texts] == ["1", "1", "2", "2", "3"], texts
    for _page, text, to_page, at in links:
        number = text.strip("[]")
        assert at.lstrip().startswith(f"[{number}]"), (text, at)
        if number in ("1", "2"):
            assert to_page == entries[int(number)]


def test_nothing_links_when_there_are_no_references() -> None:
    data = markdown_to_pdf("# Notes\n\nA claim [1] with no reference list.\n")
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        assert goto_links(doc) == []
        assert "A claim [1]" in doc[0].get_text()


def test_the_sample_report_pdf_is_numbered_and_linked(workspace: Path) -> None:
    with session_scope() as session:
        report = get_report(session, load_sample(session)["report_id"])
        markdown = version_markdown(session, report, with_version_line=True)
    assert "](#ref-" not in markdown  # the Markdown keeps plain [n]: it imports back as is
    with pymupdf.open(stream=markdown_to_pdf(markdown), filetype="pdf") as doc:
        links = goto_links(doc)
        last = doc[-1].get_text()
        assert f"{doc.page_count} / {doc.page_count}" in last
    cited = {text.strip("[]") for _p, text, _to, _at in links}
    assert {str(n) for n in range(1, 15)} <= cited
    assert all(at.lstrip().startswith(f"[{t.strip('[]')}]") for _p, t, _to, at in links)


# -- file names ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Énergie stockée", "Énergie stockée — v3.pdf"),
        ('Storage: where/when? <draft> | "v2" *', "Storage where when draft v2 — v3.pdf"),
        (
            "Tab\there\nnewline\x00nul\u202eright-to-left",
            "Tab here newline nulright-to-left — v3.pdf",
        ),
        ("储能报告：2026", "储能报告：2026 — v3.pdf"),
        ("...hidden. ", "hidden — v3.pdf"),
        ("CON", "_CON — v3.pdf"),
        ("aux.txt", "_aux.txt — v3.pdf"),
        ("", "report — v3.pdf"),
        ("///", "report — v3.pdf"),
        ("e\u0301te\u0301", "été — v3.pdf"),
    ],
)
def test_file_names_keep_accents_and_lose_only_what_no_system_accepts(
    title: str, name: str
) -> None:
    assert export_file_name(title, 3, "pdf") == name


def test_long_titles_are_cut_after_a_whole_word() -> None:
    title = "Grid-scale battery energy storage in the Halvard interconnection " * 4
    stem = safe_file_stem(title)
    assert len(stem) <= MAX_NAME_CHARS + 1 and stem.endswith("…")
    words = title.split()
    assert stem[:-1].split() == words[: len(stem[:-1].split())]  # only whole words
    accented = "Énergie " * 60
    stem = safe_file_stem(accented)
    assert len(stem.encode("utf-8")) <= MAX_NAME_BYTES and set(stem[:-1].split()) == {"Énergie"}


def test_a_single_word_too_long_is_cut_between_characters() -> None:
    stem = safe_file_stem("储" * 500)
    assert stem == "储" * (len(stem) - 1) + "…"
    assert len(stem.encode("utf-8")) <= MAX_NAME_BYTES


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(EvergreenError, match="Unknown export format 'docx'"):
        export_file_name("Report", 1, "docx")


@pytest.mark.parametrize("url", ["https://pages.example/p", ""])
@pytest.mark.parametrize(
    "title",
    [
        "![r](https://tracker.example/pixel.png)",
        "[click](javascript:alert(1)) and OP_VAULT \\ Q&A",
        "!\\[r](https://tracker.example/pixel.png)",
    ],
)
def test_a_page_title_is_text_in_the_references_never_an_image_or_html(
    url: str, title: str
) -> None:
    """A fetched page's title goes into the References as text: no renderer (CommonMark or
    GFM) turns it into an image or a link; read back, it is the same title. (Raw HTML in a
    title is escaped with every other field: test_untrusted.)"""
    from markdown_it import MarkdownIt

    from core.domain.reference_entries import parse_entry_text
    from core.domain.report_render import _render_reference
    from core.domain.report_state import RefEntry

    line = _render_reference(RefEntry(7, url, title, "2026-01-15"))
    for preset in ("commonmark", "gfm-like"):
        html = MarkdownIt(preset, {"linkify": False, "html": True}).render(line)
        assert "<img" not in html and 'href="javascript' not in html
        assert html.count("<a ") == (1 if url else 0)
    if url:
        assert parse_entry_text(line.split("] ", 1)[1]) == (url, title, "2026-01-15")
