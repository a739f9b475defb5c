"""A collection's template — the lines many of its pages share word for word — is learnt
from the collection and left out when relevance reads a page."""

from __future__ import annotations

from pathlib import Path

from core.domain.boilerplate import template_lines, without_template

TOC = "## Table of Contents\n\n- [Summary](#summary)\n- [Test Plan](#test-plan)\n"


def _page(n: int, text: str) -> str:
    return f"---\ntitle: Page {n}\n---\n\n# Page {n}\n\n{TOC}\n{text}\n"


def test_lines_most_pages_share_are_the_template_and_only_those() -> None:
    pages = [_page(n, f"Widget {n} stores its data in a {n}-level tree.") for n in range(10)]
    pages.append(_page(99, "A page of its own: ## Summary is not a line here."))
    template = template_lines(pages)
    toc = {"## table of contents", "- [summary](#summary)", "- [test plan](#test-plan)"}
    assert toc <= template
    assert "---" not in template  # markup, not template
    assert not any("widget" in line or "page 1" in line for line in template)
    read = without_template(pages[3], template)
    assert "Table of Contents" not in read and "[Test Plan]" not in read
    assert "# Page 3" in read and "Widget 3 stores its data in a 3-level tree." in read


def test_too_few_pages_have_no_template() -> None:
    assert template_lines([_page(n, "x") for n in range(4)]) == frozenset()
    assert without_template("a\nb", frozenset()) == "a\nb"


def test_relevance_reads_a_collections_pages_without_their_template(
    corpus_home: Path, tmp_path: Path
) -> None:
    """The template is learnt from the collection the pages come from (its sample); the web
    has none, and a page from it is read as it is."""
    from core.domain.relevance import Relevance
    from core.sources.corpus import Corpus
    from tests.conftest import write_jsonl

    topics = ["databases", "web servers", "packaging", "typing", "concurrency", "parsers"]
    records = [
        {
            "url": f"https://example.org/{i}",
            "title": f"Proposal {i}",
            "as_of": "2024-01-01",
            "content": _page(i, f"This proposal is about {topics[i % 6]}. " * 3),
        }
        for i in range(30)
    ]
    corpus = Corpus.open("templated", create=True)
    corpus.import_path(write_jsonl(tmp_path / "templated.jsonl", records))
    page = ("Proposal 3", records[3]["content"])
    _title, read = Relevance("typing", corpus)._read(page)
    assert "Table of Contents" not in read and "[Test Plan]" not in read
    assert "This proposal is about typing." in read
    assert Relevance("typing")._read(page) == page  # no collection: no template
