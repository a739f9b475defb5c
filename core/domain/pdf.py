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

Navigation: every page carries "n / N" at its foot, and each ``[n]`` citation in the text
links to its entry in the References (the entry gets the anchor ``ref-n``); a marker with no
entry, one in code, an escaped ``\\[n]`` and the entries' own numbers stay plain text.

Bounded time: PyMuPDF's layout is quadratic in the length of an unbreakable run of
characters (one 80,000-character "word" took 6 s, 1.9 MB more than 300 s), so before
layout a run of more than ``WRAP`` non-space characters in text gets a zero-width space (a
line-break opportunity, invisible) every ``WRAP`` characters, and a code block line longer
than ``CODE_WRAP`` is hard-wrapped; layout is then linear (1.9 MB in about 10 s). The app
renders through ``render_pdf``, which runs ``markdown_to_pdf`` in a worker process and
stops it after a time limit, so no input can hold up the app.
"""

from __future__ import annotations

import multiprocessing
import re
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from markdown_it.token import Token

from core.domain.citations import install, numbers_written
from core.domain.reference_entries import entry_number
from core.errors import EvergreenError

if TYPE_CHECKING:
    import pymupdf  # lazy: PyMuPDF loads only when a PDF is made
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

WRAP = 60  # longest run of non-space characters laid out without a break opportunity
CODE_WRAP = 90  # longest code line (monospace 9 pt fills an A4 line at about 95)
PDF_TIME_LIMIT = 120.0  # seconds the app waits for a PDF before stopping the renderer
_ZWSP = "\u200b"
_LONG_RUN = re.compile(rf"[^ \t\n\u200b]{{{WRAP + 1},}}")  # NBSP & co. do not break
_LONG_LINE = re.compile(rf"[^\n]{{{CODE_WRAP + 1},}}")
REFERENCES_HEADING = "References"
FOOTER_SIZE = 8.0  # pt, the page number at the foot of each page

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
        import pymupdf  # lazy: PyMuPDF loads only when a PDF is made
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
            add_break_opportunities(pdf.m_d)
            add_citation_links(pdf.m_d)
            pdf.meta = {**MarkdownPdf.meta, "title": title or _first_heading(markdown)}
            pdf.meta["creator"] = "Evergreen"
            # root: an empty folder, so nothing outside the document can be embedded
            pdf.add_section(Section(markdown, root=tmp, toc=True), user_css=CSS)
            raw = Path(tmp) / "raw.pdf"
            pdf.save(raw)
            doc = pymupdf.open(raw)
            try:
                number_pages(doc)
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


def _break_run(match: re.Match[str]) -> str:
    run = match.group()
    return _ZWSP.join(run[i : i + WRAP] for i in range(0, len(run), WRAP))


def _wrap_code(match: re.Match[str]) -> str:
    line = match.group()
    return "\n".join(line[i : i + CODE_WRAP] for i in range(0, len(line), CODE_WRAP))


def _break_long_runs(state: StateCore) -> None:
    """markdown-it core rule: break opportunities in long runs of text and inline code,
    hard wraps in long code block lines (link targets are left alone)."""
    for token in state.tokens:
        if token.type in ("fence", "code_block"):
            token.content = _LONG_LINE.sub(_wrap_code, token.content)
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                child.content = _LONG_RUN.sub(_break_run, child.content)


def add_break_opportunities(md: MarkdownIt) -> None:
    """Make ``md`` render no unbreakable run longer than ``WRAP`` (``CODE_WRAP`` in code)."""
    md.core.ruler.push("eg_break_long_runs", _break_long_runs)


def number_pages(doc: pymupdf.Document) -> None:
    """Write "n / N" centred at the foot of every page, in the bottom margin."""
    import pymupdf  # lazy: PyMuPDF loads only when a PDF is made

    total = doc.page_count
    for page in doc:
        label = f"{page.number + 1} / {total}"
        width = pymupdf.get_text_length(label, fontname="helv", fontsize=FOOTER_SIZE)
        x = (page.rect.width - width) / 2
        y = page.rect.height - 18  # the layout keeps a 36 pt margin (markdown-pdf's default)
        page.insert_text(
            (x, y), label, fontname="helv", fontsize=FOOTER_SIZE, color=(0.4, 0.4, 0.4)
        )


def _references_start(tokens: list[Token]) -> int | None:
    """Where the References begin: the last level-2 heading titled so."""
    for i in range(len(tokens) - 2, -1, -1):
        token, inline = tokens[i], tokens[i + 1]
        heading = token.type == "heading_open" and token.tag == "h2"
        if heading and inline.type == "inline" and inline.content.strip() == REFERENCES_HEADING:
            return i
    return None


def _anchor_entries(tokens: list[Token]) -> set[int]:
    """Give each reference entry ("[n] …") the anchor ``ref-n``; return the numbers."""
    anchors: set[int] = set()
    for k in range(1, len(tokens) - 1):
        opener, inline = tokens[k], tokens[k + 1]
        if opener.type != "paragraph_open" or inline.type != "inline":
            continue
        number = entry_number(inline.content)  # the one reading of an entry's number
        if number is None or number in anchors:
            continue
        target = tokens[k - 1] if opener.hidden else opener  # a tight list: on its item
        target.attrSet("id", f"ref-{number}")
        anchors.add(number)
    return anchors


def _citation_spans(group: str, anchors: set[int]) -> list[tuple[int, int, int]]:
    """(start, end, n) of each anchored number of a citation group: a lone ``[n]`` whole,
    each number of ``[1, 2]`` or ``[1-3]`` on its own."""
    numbers = numbers_written(group)
    if len(numbers) == 1 and numbers[0][2] in anchors:
        return [(0, len(group), numbers[0][2])]
    return [(a, b, n) for a, b, n in numbers if n in anchors]


def _linked_citation(token: Token, anchors: set[int]) -> list[Token]:
    """A ``citation`` token (core.domain.citations) as text, its anchored numbers links to their
    References entries."""
    text, pieces, pos = token.content, [], 0
    for start, end, number in _citation_spans(text, anchors):
        if start > pos:
            pieces.append(Token("text", "", 0, content=text[pos:start]))
        pieces += [
            Token("link_open", "a", 1, attrs={"href": f"#ref-{number}"}),
            Token("text", "", 0, content=text[start:end]),
            Token("link_close", "a", -1),
        ]
        pos = end
    if pos < len(text):
        pieces.append(Token("text", "", 0, content=text[pos:]))
    return pieces


def _linked_children(children: list[Token], anchors: set[int]) -> list[Token]:
    out: list[Token] = []
    for child in children:  # the grammar leaves link text alone: no citation inside a link
        out += _linked_citation(child, anchors) if child.type == "citation" else [child]
    return out


def _link_citations(state: StateCore) -> None:
    """markdown-it core rule: ``[n]`` in the text → a link to References entry n."""
    start = _references_start(state.tokens)
    if start is None:
        return
    anchors = _anchor_entries(state.tokens[start:])
    if not anchors:
        return
    for token in state.tokens[:start]:
        if token.type == "inline" and token.children:
            token.children = _linked_children(token.children, anchors)


def add_citation_links(md: MarkdownIt) -> None:
    """Make ``md`` link each ``[n]`` to the References entry ``[n]`` (anchor ``ref-n``):
    ``md`` learns the citation grammar (``core.domain.citations``, which leaves an escaped
    ``\\[n]``, code and link text alone) and a core rule turns its tokens into links."""
    install(md)
    md.core.ruler.before("text_join", "eg_citation_links", _link_citations)


def _render_in_worker(conn: Connection, markdown: str, title: str | None) -> None:
    """Worker process body: send (True, pdf bytes) or (False, message) back."""
    try:
        conn.send((True, markdown_to_pdf(markdown, title=title)))
    except EvergreenError as exc:
        conn.send((False, str(exc)))
    except BaseException as exc:  # the parent gets a message, never a silent death
        conn.send((False, f"Could not render the PDF ({type(exc).__name__}: {exc})."))
    finally:
        conn.close()


def _context() -> multiprocessing.context.BaseContext:
    # fork: starts at once, with the modules already imported; spawn where there is none
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def render_pdf(
    markdown: str, *, title: str | None = None, time_limit: float = PDF_TIME_LIMIT
) -> bytes:
    """``markdown_to_pdf`` in a worker process, stopped after ``time_limit`` seconds.

    Raises EvergreenError with the renderer's message, or a one-line "took longer than"
    message when the limit is reached (the worker is killed; nothing is left running).
    """
    ctx = _context()
    receiver, sender = ctx.Pipe(duplex=False)
    worker = ctx.Process(
        target=_render_in_worker, args=(sender, markdown, title), name="evergreen-pdf", daemon=True
    )
    worker.start()
    sender.close()
    try:
        if not receiver.poll(time_limit):
            raise EvergreenError(
                f"The PDF took longer than {time_limit:g} s to render and was stopped; "
                "download the Markdown instead."
            )
        ok, payload = receiver.recv()
    except (EOFError, OSError):
        worker.join(5)
        raise EvergreenError(
            f"The PDF renderer stopped unexpectedly (exit code {worker.exitcode})."
        ) from None
    finally:
        receiver.close()
        if worker.is_alive():
            worker.kill()
        worker.join(5)
    if not ok:
        raise EvergreenError(payload)
    return payload


def _first_heading(markdown: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return "Evergreen report"
