"""PDF export: headings, tables, lists, links and CJK text survive; HTML stays text;
a failure is a clear EvergreenError and never an empty file."""

from __future__ import annotations

import multiprocessing
import re
import time
from pathlib import Path

import pymupdf
import pytest

from core.app.export import export_version, version_line
from core.domain.pdf import markdown_to_pdf, render_pdf
from core.errors import EvergreenError
from core.store.db import session_scope
from core.store.repository import get_report
from core.workspace import load_sample

DOC = """# Storage report 储能报告

Lithium iron phosphate dominates [1]. See [the tracker](https://example.org/tracker).

## Prices

| Quarter | $/kWh |
|---------|-------|
| Q4 2025 | 142 |
| Q1 2026 | 134 |

- first point
- 日本語の項目
- 한국어 항목

Hostile: <script>alert(1)</script> <img src="/etc/passwd" onerror="x()"> ![img](secret.png)

## References

[1] [Tessaly index](https://example.org/tessaly) — fetched 2026-01-15

[2] [Gridtally tracker](https://example.org/tracker) — fetched 2026-01-15
"""


def pdf_text(data: bytes) -> tuple[str, list[str], list]:
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        text = "\n".join(page.get_text() for page in doc)
        links = [link.get("uri") for page in doc for link in page.get_links()]
        toc = doc.get_toc()
    return text, links, toc


def test_renders_headings_tables_lists_links_and_cjk() -> None:
    data = markdown_to_pdf(DOC)
    assert data.startswith(b"%PDF")
    assert len(data) < 400_000  # fonts are subset
    text, links, toc = pdf_text(data)
    for expected in (
        "Storage report 储能报告",
        "Prices",
        "Q1 2026",
        "134",
        "日本語の項目",
        "한국어 항목",
        "Tessaly index",
        "fetched 2026-01-15",
    ):
        assert expected in text, expected
    assert "https://example.org/tracker" in links and "https://example.org/tessaly" in links
    assert [t[1] for t in toc] == ["Storage report 储能报告", "Prices", "References"]
    assert "<script>alert(1)</script>" in text  # raw HTML is printed, not interpreted


def test_reference_lines_stay_separate() -> None:
    text, _, _ = pdf_text(markdown_to_pdf(DOC))
    lines = [line for line in text.splitlines() if line.startswith("[")]
    assert any(line.startswith("[1]") for line in lines)
    assert any(line.startswith("[2]") for line in lines)


def test_empty_markdown_is_refused() -> None:
    with pytest.raises(EvergreenError, match="Nothing to export"):
        markdown_to_pdf("  \n")


def test_a_renderer_failure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import markdown_pdf

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("layout engine exploded")

    monkeypatch.setattr(markdown_pdf.MarkdownPdf, "add_section", boom)
    with pytest.raises(EvergreenError, match="Could not render the PDF.*exploded"):
        markdown_to_pdf(DOC)


def test_export_version_to_pdf_and_no_file_on_failure(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with session_scope() as session:
        report = get_report(session, load_sample(session)["report_id"])
        out = export_version(session, report, tmp_path / "r.pdf", fmt="pdf")
        text, links, _ = pdf_text(out.read_bytes())
        assert "Grid-Scale Battery Energy Storage" in text and "References" in text
        assert "Version 1 · as of 2026-01-15 · " in text  # the line generated from the version
        assert "Sample data written for Evergreen" in text  # the sample's own body line stays
        assert any(u and u.startswith("https://sample.evergreen.invalid/") for u in links)

        def broken(markdown: str, **_: object) -> bytes:
            raise EvergreenError("Could not render the PDF (test).")

        monkeypatch.setattr("core.app.export.markdown_to_pdf", broken)
        with pytest.raises(EvergreenError, match="Could not render"):
            export_version(session, report, tmp_path / "bad.pdf", fmt="pdf")
    assert not (tmp_path / "bad.pdf").exists()
    assert not list(tmp_path.glob(".bad.pdf*"))


def test_version_line_wording() -> None:
    counts = {"claims": 36, "supported": 36, "unsupported": 0, "unresolved": 0, "stale": 0}
    assert (
        version_line(3, "2026-07-15", counts)
        == "_Version 3 · as of 2026-07-15 · 36 claims, 0 stale_"
    )
    one = {"claims": 1, "supported": 0, "unsupported": 1, "unresolved": 0, "stale": 0}
    assert version_line(1, "2026-01-15", one) == (
        "_Version 1 · as of 2026-01-15 · 1 claim, 0 stale, 1 unsupported_"
    )
    assert version_line(2, "2026-04-15", {"claims": 0}) == "_Version 2 · as of 2026-04-15_"
    assert version_line(2, "2026-04-15") == "_Version 2 · as of 2026-04-15_"


# -- bounded time (issue 15, item 3) ---------------------------------------------------------
def rendered_html(monkeypatch: pytest.MonkeyPatch, markdown: str) -> str:
    """The HTML markdown_to_pdf hands to the layout engine."""
    import markdown_pdf

    seen: list[str] = []
    original = markdown_pdf.MarkdownPdf.add_section

    def keep(self: markdown_pdf.MarkdownPdf, section: object, **kw: object) -> str:
        html = original(self, section, **kw)
        seen.append(html)
        return html

    monkeypatch.setattr(markdown_pdf.MarkdownPdf, "add_section", keep)
    markdown_to_pdf(markdown)
    return seen[0]


def test_the_renderer_gets_no_unbreakable_run_longer_than_wrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.domain.pdf import CODE_WRAP, WRAP

    word = "x" * 5000
    markdown = (
        f"# T\n\nA {word} b [{word}](https://example.org/{'y' * 300}) `{word}`\n\n"
        f"| a |\n|---|\n| {word} |\n\n```\n{word}\n```\n"
    )
    html = rendered_html(monkeypatch, markdown)
    text = re.sub(r"<[^>]*>", " ", html)
    assert max(len(run) for run in re.split(r"[ \t\n\u200b]+", text)) <= max(WRAP, CODE_WRAP)
    assert f'href="https://example.org/{"y" * 300}"' in html  # link targets are untouched
    assert text.replace("\u200b", "").replace("\n", "").count(word) == 5  # nothing lost


def test_a_1_9_mb_single_line_body_exports_within_the_time_limit() -> None:
    # took more than 300 s before; the limit only guards the test from hanging
    data = render_pdf("# One line\n\n" + "x" * 1_900_000 + "\n", time_limit=300)
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        assert doc.page_count > 100
        assert doc[0].get_text().startswith("One line\nxxxxxxxx")


def test_render_pdf_stops_a_renderer_that_runs_over_its_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stuck(markdown: str, **_: object) -> bytes:
        time.sleep(600)
        return b""

    monkeypatch.setattr("core.domain.pdf.markdown_to_pdf", stuck)
    with pytest.raises(EvergreenError, match=r"^The PDF took longer than 1 s to render"):
        render_pdf(DOC, time_limit=1)
    assert not multiprocessing.active_children()  # the worker was stopped


def test_render_pdf_returns_the_pdf_or_the_renderer_message() -> None:
    assert pdf_text(render_pdf(DOC, time_limit=120))[0].startswith("Storage report")
    with pytest.raises(EvergreenError, match="Nothing to export"):
        render_pdf("  \n", time_limit=120)


def test_the_app_prepares_the_pdf_with_a_time_limit(
    app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.apptest import ok

    def stuck(markdown: str, **_: object) -> bytes:
        time.sleep(600)
        return b""

    monkeypatch.setattr("core.domain.pdf.markdown_to_pdf", stuck)
    monkeypatch.setattr("core.domain.pdf.PDF_TIME_LIMIT", 1.0)
    ok(app.switch_page("pages/report.py").run())  # type: ignore[attr-defined]
    ok(app.button(key="make_pdf").click().run())  # type: ignore[attr-defined]
    errors = [e.value for e in app.error]  # type: ignore[attr-defined]
    assert any(e.startswith("PDF export failed: The PDF took longer than 1 s") for e in errors)


def test_pdf_html_escapes_raw_html(monkeypatch: pytest.MonkeyPatch) -> None:
    html = rendered_html(monkeypatch, DOC)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
