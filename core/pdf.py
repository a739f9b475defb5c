"""Markdown → PDF for exported report versions.

Library: ``markdown-pdf`` (markdown-it-py + PyMuPDF's HTML "Story" layout). Of the three
libraries compared in RECIPES.md it is the only one that installs with pip alone *and*
renders CJK text without system fonts (PyMuPDF falls back to its built-in Noto CJK
font); it also draws table borders, keeps links clickable and writes a bookmark per
heading. ``fpdf2`` needs TTF fonts added by hand (no CJK font ships on Debian by
default) and draws tables without borders; ``weasyprint`` lays out best but needs
Pango/HarfBuzz system libraries. Caveat: PyMuPDF is AGPL-3.0 (or Artifex commercial);
a closed redistribution would need the commercial licence or a switch to fpdf2.

Safety: the Markdown is parsed with raw HTML *off* (``js-default`` preset), so a
``<script>`` or ``<img onerror=…>`` in a section is printed as text, and images are
disabled, so a report cannot pull a local file (or a remote one) into the PDF. The
full embedded fonts (~3.7 MB) are subset to the glyphs used (~40 KB).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from core.errors import EvergreenError

CSS = """
body { font-family: sans-serif; font-size: 10.5pt; line-height: 1.35; }
h1 { font-size: 18pt; } h2 { font-size: 14pt; } h3 { font-size: 12pt; }
table { border-collapse: collapse; margin: 4pt 0; }
th, td { border: 0.6pt solid #888888; padding: 2pt 4pt; vertical-align: top; }
th { background-color: #eeeeee; }
code, pre { font-family: monospace; font-size: 9pt; }
a { color: #1a4fb3; }
"""


def markdown_to_pdf(markdown: str, *, title: str | None = None) -> bytes:
    """Render ``markdown`` (headings, tables, lists, links, CJK text) as PDF bytes.

    Raises EvergreenError with an actionable message on any failure; never returns
    an empty document.
    """
    if not markdown or not markdown.strip():
        raise EvergreenError("Nothing to export: the version's Markdown is empty.")
    try:
        import pymupdf
        from markdown_pdf import MarkdownPdf, Section
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EvergreenError(
            f"PDF export needs the markdown-pdf package ({exc.name} is missing); "
            "run `pip install -e .` again."
        ) from None
    try:
        with tempfile.TemporaryDirectory(prefix="evergreen-pdf-") as tmp:
            pdf = MarkdownPdf(toc_level=3, mode="js-default", optimize=False)
            pdf.m_d.disable("image")
            pdf.meta = {**MarkdownPdf.meta, "title": title or _first_heading(markdown)}
            pdf.meta["creator"] = "Evergreen"
            # root: an empty folder, so nothing outside the document can be embedded
            pdf.add_section(Section(markdown, root=tmp, toc=True), user_css=CSS)
            raw = Path(tmp) / "raw.pdf"
            pdf.save(raw)
            doc = pymupdf.open(raw)
            try:
                doc.subset_fonts()
                data = doc.tobytes(garbage=3, deflate=True)
            finally:
                doc.close()
    except EvergreenError:
        raise
    except Exception as exc:
        raise EvergreenError(f"Could not render the PDF ({type(exc).__name__}: {exc}).") from None
    if not data.startswith(b"%PDF") or len(data) < 200:
        raise EvergreenError("Could not render the PDF: the renderer produced an empty file.")
    return data


def _first_heading(markdown: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return "Evergreen report"
